// A session whose remembered run database cannot be opened (a text file, a damaged one): the
// window opens with no database and asks; nothing is trained or written into the default
// database until the user chooses it, and "Not now" keeps the remembered choice for next time.
#include <QAbstractButton>
#include <QFile>
#include <QMessageBox>
#include <QStatusBar>
#include <QtTest>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "oomlab/store/run_store.h"
#include "runs/run_database.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;

class DatabaseChoiceTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_home;
    QString m_notes;

    // A session that remembers the text file as its database.
    std::unique_ptr<MainWindow> startSession() {
        AppSettings::setDatabasePath(m_notes);
        MainWindowOptions options;
        options.config = test::tinyConfig(4);
        options.restoreSession = true;
        auto window = std::make_unique<MainWindow>(options);
        window->show();
        return window;
    }

    static QMessageBox* choiceBox(MainWindow& window) {
        QMessageBox* box = nullptr;
        const bool asked = QTest::qWaitFor(
            [&] { return (box = window.findChild<QMessageBox*>("databaseChoice")) != nullptr; },
            5000);
        return asked ? box : nullptr;
    }

    static void click(QMessageBox* box, const QString& text) {
        for (QAbstractButton* button : box->buttons()) {
            if (button->text() == text) {
                button->click();
                return;
            }
        }
        QFAIL(qPrintable("no button " + text));
    }

    QString defaultDatabase() const { return qs(RunStore::default_path()); }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("XDG_DATA_HOME", m_home.path().toUtf8());
        m_notes = m_home.filePath(QStringLiteral("notes.txt"));
        QFile notes(m_notes);
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write(QByteArray("my notes, not a database\n").repeated(50));
    }

    void aRememberedDatabaseThatCannotBeOpenedIsNeverReplacedUnasked() {
        auto window = startSession();
        QMessageBox* box = choiceBox(*window);
        QVERIFY(box);
        QVERIFY(box->text().contains(m_notes));
        QVERIFY(!box->informativeText().isEmpty());  // what is wrong with the file
        QVERIFY(!window->database()->isOpen());
        QCOMPARE(window->windowTitle(), QStringLiteral("No run database"));
        // Nothing trains while the question is open, and the default database is not made.
        QVERIFY(!window->startRun());
        QVERIFY(window->statusBar()->currentMessage().contains(QStringLiteral("No run database")));
        QVERIFY(!QFile::exists(defaultDatabase()));

        click(box, QStringLiteral("Not now"));
        QVERIFY(!window->database()->isOpen());
        QVERIFY(!window->startRun());
        QVERIFY(!QFile::exists(defaultDatabase()));
        // The remembered choice stays: the next start asks again rather than forgetting it.
        QCOMPARE(AppSettings::databasePath(), m_notes);
        QCOMPARE(QFile(m_notes).size(), qint64(50 * 25));  // the file is untouched
    }

    void theDefaultDatabaseOpensWhenChosen() {
        auto window = startSession();
        QMessageBox* box = choiceBox(*window);
        QVERIFY(box);
        click(box, QStringLiteral("Open the default database"));
        QVERIFY(window->database()->isOpen());
        QCOMPARE(window->database()->path(), defaultDatabase());
        QCOMPARE(AppSettings::databasePath(), defaultDatabase());
        const RunEnd end = test::runAndWait(*window);
        QVERIFY(end.runId > 0);
        QCOMPARE(window->database()->store().list_runs().size(), std::size_t(1));
    }

    void theDefaultDatabaseThatCannotBeOpenedIsNotOfferedAgain() {
        // The default path itself is the bad file: only another database or none is offered.
        QFile::remove(defaultDatabase());
        QVERIFY(QFile::copy(m_notes, defaultDatabase()));
        AppSettings::setDatabasePath(defaultDatabase());
        MainWindowOptions options;
        options.restoreSession = true;
        MainWindow window(options);
        window.show();
        QMessageBox* box = choiceBox(window);
        QVERIFY(box);
        for (QAbstractButton* button : box->buttons()) {
            QVERIFY(button->text() != QStringLiteral("Open the default database"));
        }
        click(box, QStringLiteral("Not now"));
        QVERIFY(!window.database()->isOpen());
    }
};

OOMLAB_UI_TEST(DatabaseChoiceTest)
#include "database_choice_test.moc"
