// A lesson opened from where the command line or a desktop's double-click names it: a lesson
// file, a built-in lesson's name, or the http:// or https:// address of a file a lecturer
// serves, read on a worker thread so that the window stays free while the server answers.
#pragma once

#include <QString>
#include <functional>

namespace oomlab::ui {

class LessonFlow;
class MainWindow;

// Opens the lesson at `source` in `window`. `done` gets the lesson's window, or null and why
// not (also shown in a message box that does not block); it is called on the window's thread,
// at once for a file and when the server has answered for an address.
void openLessonFrom(MainWindow* window, const QString& source,
                    std::function<void(LessonFlow*, const QString& error)> done = {});

}  // namespace oomlab::ui
