// The lines of a lesson's earlier runs, kept on a live plot while the next run trains, so a
// room sees both runs at once (each run used to wipe the plot of the one before).
#pragma once

#include <QString>
#include <QVector>

#include "plots/themed_plot.h"

namespace oomlab::ui {

class EarlierRuns {
public:
    explicit EarlierRuns(ThemedPlot* plot);

    // A copy of `line`'s points, named `name` in the legend: grey, drawn under the current
    // run's lines, dashed a way of its own for each earlier run. Both redraw the plot.
    void keep(const QCPGraph* line, const QString& name);
    void clear();

    int count() const { return m_lines.size(); }
    const QCPGraph* line(int index) const { return m_lines.at(index); }
    // Widens `keys` and `values` to every earlier run's points, so the axes fit them too.
    void addBounds(Bounds& keys, Bounds& values) const;

private:
    ThemedPlot* m_plot;
    QVector<QCPGraph*> m_lines;
    Bounds m_keys;
    Bounds m_values;
};

}  // namespace oomlab::ui
