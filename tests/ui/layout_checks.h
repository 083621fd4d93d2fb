// What makes a view hard to read on a small screen or in large text, found in a window as it
// is laid out: each function lists what it found, in words that say where, or nothing.
#pragma once

#include <QString>
#include <QStringList>

#include <functional>

class QWidget;

namespace oomlab::ui::test {

// The data area of a plot with lines must be this many lines of its text high at least, a
// plot of bars this many.
constexpr int kReadableGraphLines = 5;
constexpr int kReadableBarLines = 2;
// A table shows this many rows under its heading at least (or all it has).
constexpr int kReadableTableRows = 3;

// The widgets whose minimum size is largest in `orientation`: what to look at when the
// window cannot fit.
QString largestMinimums(const QWidget* root, Qt::Orientation orientation);
// Controls narrower or lower than their text needs, or reaching outside the window.
QStringList clippedControls(const QWidget* window);
// Plots whose data area is too small to read, legend entries drawn smaller than their text,
// labels on the data that cover one another, and axis labels cut short ("#5 ZeR…").
QStringList crampedPlots(const QWidget* window);
// Table headings and cells narrower than their text (Qt elides them: "Gradie…"), under
// `root`.
QStringList elidedTableText(const QWidget* root);
// Tables whose rows or heading are lower than their text (presentation mode's larger text
// overlapped them), or that show fewer than kReadableTableRows rows.
QStringList crampedTables(const QWidget* root);

// What `check` finds once the layouts have settled: a change of size or of text size asks the
// layouts again, and the plots redraw on a timer (ThemedPlot's coalesced replots), which on a
// busy machine takes more turns of the event loop than on a quiet one. `check` is asked again
// after each turn until it finds nothing, for up to 10 s: a view that never fits is still
// said, and a slow machine waits longer instead of failing.
QStringList onceSettled(const std::function<QStringList()>& check);

}  // namespace oomlab::ui::test
