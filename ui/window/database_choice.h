// When the run database a session starts with cannot be opened, the user chooses what to
// open instead: no run is ever written into another database unasked.
#pragma once

#include <QString>

#include <functional>

class QMessageBox;
class QWidget;

namespace oomlab::ui {

enum class DatabaseChoice { Default, Another, NotNow };

// Opens (window-modal, without blocking) a box that names `path` and `error` and offers the
// default database (when `offerDefault`), another one, or none for now; `chosen` gets the
// answer. The box deletes itself when closed.
QMessageBox* askForRunDatabase(QWidget* parent, const QString& path, const QString& error,
                               bool offerDefault,
                               const std::function<void(DatabaseChoice)>& chosen);

}  // namespace oomlab::ui
