// A class's runs on a projector: the Runs table and Compare's results read whole at 1024x768
// in presentation mode, with the columns a room needs least left out (fitted_columns.h).
#include <QHeaderView>
#include <QLineEdit>
#include <QScrollBar>
#include <QTableView>
#include <QtTest>

#include "compare/compare_metrics_model.h"
#include "compare/compare_page.h"
#include "layout_checks.h"
#include "oomlab/store/run_store.h"
#include "runs/run_database.h"
#include "runs/runs_model.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;
using namespace oomlab::ui::test;

namespace {

// A run's end as a short CPU run of the default experiment ends.
RunOutcome finishedRun() {
    RunOutcome outcome;
    outcome.status = RunStatus::Completed;
    outcome.steps = 12;
    outcome.final_train_loss = 1.3398;
    outcome.val_accuracy = 0.316;
    outcome.peak_bytes = std::int64_t{15099494};  // 14.4 MiB
    outcome.wall_seconds = 0.27;
    return outcome;
}

}  // namespace

class ClassProjectorTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        {
            // Three runs of the lecturer's, with names longer than a student's.
            RunStore store = RunStore::open(m_dir.filePath("runs.sqlite").toStdString());
            for (const char* name :
                 {"baseline with the dataset's vocabulary", "batch 64 under a 14 MiB cap, adapting",
                  "batch 256 under an 8 MiB cap, out of memory"}) {
                store.finish_run(store.create_run({name, "{}", "cpu", "0.1.0", "1.13"}),
                                 finishedRun());
            }
        }
        m_window = std::make_unique<MainWindow>(
            test::windowOptions(m_dir.filePath("runs.sqlite"), test::tinyConfig(12)));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    // A class's runs on the projector: with 30 runs of students, widths the lecturer chose at
    // the desktop's text size, and presentation mode on a 1024x768 screen, every heading and
    // cell shown is read whole and the table does not scroll sideways: the columns a room needs
    // least are left out ("mbedding", "com…" were shown); a wider window brings them back.
    void aClassesRunsAreReadWholeOnTheProjector() {
        {
            RunStore store = RunStore::open(m_dir.filePath("runs.sqlite").toStdString());
            const RunOutcome outcome = finishedRun();
            for (int student = 1; student <= 27; ++student) {
                const std::int64_t id =
                    store.create_run({"student-" + std::to_string(student) + ": batch " +
                                          std::to_string(16 + student),
                                      "{}", "cpu", "0.1.0", "1.13"});
                store.finish_run(id, outcome);
            }
        }
        m_window->database()->notifyRunsChanged();
        m_window->setPresentationMode(false);
        m_window->setMaximumSize(QSize(1366, 768));
        m_window->resize(1366, 768);
        m_window->showPage(MainWindow::RunsTab);
        QApplication::processEvents();
        auto* table = m_window->runsPage()->findChild<QTableView*>(QStringLiteral("runsTable"));
        QVERIFY(table);
        QTRY_VERIFY(table->model()->rowCount() >= 30);
        // The class's own runs, as the lecturer filters them (the fixture's three others have
        // names longer than a student's).
        auto* search = m_window->runsPage()->findChild<QLineEdit*>(QStringLiteral("runsSearch"));
        QVERIFY(search);
        search->setText(QStringLiteral("student"));
        QTRY_COMPARE(table->model()->rowCount(), 27);
        // The lecturer widens a column at the desktop's text size: widths of their choice.
        QHeaderView* header = table->horizontalHeader();
        header->resizeSection(RunsModel::Embeddings,
                              header->sectionSize(RunsModel::Embeddings) + 8);

        const QSize screen(1024, 768);
        m_window->setMaximumSize(screen);
        m_window->resize(screen);
        m_window->setPresentationMode(true);
        QTest::qWait(100);
        QApplication::processEvents();
        QTest::qWait(100);
        const QStringList elided =
            onceSettled([&] { return elidedTableText(m_window->runsPage()); });
        QVERIFY2(elided.isEmpty(), qPrintable(elided.join('\n')));
        QVERIFY2(table->horizontalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("scrolls %1 px sideways")
                                .arg(table->horizontalScrollBar()->maximum())));
        for (const int column :
             {RunsModel::Name, RunsModel::Status, RunsModel::Peak, RunsModel::FinalLoss}) {
            QVERIFY2(!header->isSectionHidden(column), qPrintable(QString::number(column)));
        }
        QVERIFY(header->isSectionHidden(RunsModel::Notes));
        QVERIFY2(header->toolTip().contains(QStringLiteral("Left out for room")),
                 qPrintable(header->toolTip()));

        // The class's runs compared: the results table is read whole too ("Batcl", "inal los",
        // "1…" were shown), without scrolling sideways, the run, status, peak and loss kept.
        QVector<qint64> students;
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            students << table->model()->index(row, 0).data(RunsModel::RunIdRole).toLongLong();
        }
        QSignalSpy loaded(m_window->comparePage(), &ComparePage::loaded);
        m_window->compareRuns(students);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        m_window->showPage(MainWindow::CompareTab);
        QTest::qWait(100);
        QApplication::processEvents();
        QTest::qWait(100);
        QTableView* results = m_window->comparePage()->metricsTable();
        QCOMPARE(results->model()->rowCount(), 27);
        const QStringList elidedResults =
            onceSettled([&] { return elidedTableText(m_window->comparePage()); });
        QVERIFY2(elidedResults.isEmpty(), qPrintable(elidedResults.join('\n')));
        QStringList widths;
        for (int column = 0; column < results->model()->columnCount(); ++column) {
            if (!results->horizontalHeader()->isSectionHidden(column)) {
                widths << QStringLiteral("%1 %2 px")
                              .arg(results->model()->headerData(column, Qt::Horizontal).toString())
                              .arg(results->horizontalHeader()->sectionSize(column));
            }
        }
        QVERIFY2(results->horizontalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("the results scroll %1 px sideways in %2 px: %3")
                                .arg(results->horizontalScrollBar()->maximum())
                                .arg(results->viewport()->width())
                                .arg(widths.join(QStringLiteral(", ")))));
        for (const int column : {CompareMetricsModel::Run, CompareMetricsModel::Status,
                                 CompareMetricsModel::Peak, CompareMetricsModel::FinalLoss}) {
            QVERIFY2(!results->horizontalHeader()->isSectionHidden(column),
                     qPrintable(QString::number(column)));
        }
        m_window->showPage(MainWindow::RunsTab);

        m_window->setPresentationMode(false);
        m_window->setMaximumSize(QSize(4000, 3000));
        m_window->resize(2600, 900);
        QTest::qWait(100);
        QApplication::processEvents();
        QTest::qWait(100);
        QTRY_VERIFY(!header->isSectionHidden(RunsModel::Notes));
        QVERIFY(header->sectionSize(RunsModel::Embeddings) >=
                header->sectionSizeHint(RunsModel::Embeddings));
        search->clear();
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(ClassProjectorTest)
#include "class_projector_test.moc"
