#include "window/database_choice.h"

#include <QMessageBox>
#include <QPushButton>

#include "common/formatting.h"
#include "oomlab/store/run_store.h"

namespace oomlab::ui {

QMessageBox* askForRunDatabase(QWidget* parent, const QString& path, const QString& error,
                               bool offerDefault,
                               const std::function<void(DatabaseChoice)>& chosen) {
    auto* box = new QMessageBox(QMessageBox::Warning, QObject::tr("Run database"),
                                QObject::tr("The run database %1 cannot be opened.").arg(path),
                                QMessageBox::NoButton, parent);
    box->setObjectName(QStringLiteral("databaseChoice"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setInformativeText(
        QObject::tr("%1\n\nNo run is saved until a database is open; none is opened in its "
                    "place without asking.")
            .arg(error));
    QPushButton* useDefault = nullptr;
    if (offerDefault) {
        useDefault =
            box->addButton(QObject::tr("Open the default database"), QMessageBox::AcceptRole);
        useDefault->setToolTip(qs(RunStore::default_path()));
    }
    QPushButton* another = box->addButton(QObject::tr("Choose another…"), QMessageBox::ActionRole);
    QPushButton* notNow = box->addButton(QObject::tr("Not now"), QMessageBox::RejectRole);
    box->setDefaultButton(useDefault ? useDefault : another);
    box->setEscapeButton(notNow);
    QObject::connect(box, &QMessageBox::buttonClicked, box,
                     [useDefault, another, chosen](QAbstractButton* button) {
                         chosen(button == useDefault ? DatabaseChoice::Default
                                : button == another  ? DatabaseChoice::Another
                                                     : DatabaseChoice::NotNow);
                     });
    box->open();
    return box;
}

}  // namespace oomlab::ui
