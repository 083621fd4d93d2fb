// The runs table over a real database: model invariants (QAbstractItemModelTester), the
// values shown, sorting by raw numbers, filtering, renaming and notes written through.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "oomlab/advice/oom_fixes.h"
#include "oomlab/config/config_io.h"
#include "runs/run_database.h"
#include "runs/runs_filter_model.h"
#include "runs/runs_model.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

// A Runs page on the database at `path`, shown as a user sees it.
struct ShownRunsPage {
    explicit ShownRunsPage(const QString& path) : opened(database.open(path)), page(&database) {
        page.resize(1200, 500);
        page.show();
        exposed = QTest::qWaitForWindowExposed(&page);
    }
    RunDatabase database;
    QString opened;  // why the database could not be opened; empty when it was
    RunsPage page;
    bool exposed = false;
};

}  // namespace

class RunsModelTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_path;
    std::int64_t m_small = 0;
    std::int64_t m_big = 0;
    std::int64_t m_oom = 0;
    std::int64_t m_imdb = 0;  // a folder dataset; adapted from 64 to 16 x 4

    std::int64_t addRun(const char* name, int batch, RunStatus status, std::int64_t peak,
                        double loss, const char* dataset = "", int endedBatch = 0,
                        int endedAccumulation = 0) {
        RunStore store = RunStore::open(m_path.toStdString());
        ExperimentConfig config;
        config.dataset.path = dataset;
        config.train.batch_size = batch;
        config.memory.cap_mb = status == RunStatus::Oom ? 64 : 0;
        const std::int64_t id =
            store.create_run({name, config_to_json(config), "cpu", "0.1.0", "1.13"});
        MetricRow row;
        row.step = 1;
        row.phase = "step";
        row.loss = loss;
        row.allocated_bytes = peak / 2;
        store.append_metrics(id, {row});
        RunOutcome outcome;
        outcome.status = status;
        outcome.steps = 1;
        outcome.final_train_loss = loss;
        outcome.peak_bytes = peak;
        outcome.batch_size = endedBatch;
        outcome.accumulation = endedAccumulation;
        outcome.error = status == RunStatus::Oom ? "out of memory at step 1 during forward" : "";
        store.finish_run(id, outcome);
        return id;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath("runs.sqlite");
        m_small = addRun("small batch", 16, RunStatus::Completed, 10 << 20, 0.9);
        m_big = addRun("big batch", 256, RunStatus::Completed, 300 << 20, 0.7);
        m_oom = addRun("capped", 512, RunStatus::Oom, 64 << 20, 1.2);
        m_imdb =
            addRun("reviews", 64, RunStatus::Completed, 400 << 20, 0.5, "/data/imdb/train", 16, 4);
    }

    void modelPassesTheTester() {
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        RunsFilterModel filter;
        filter.setSourceModel(&model);
        QAbstractItemModelTester filterTester(
            &filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), int(RunsModel::ColumnCount));
        // Changes after construction go through the tester too.
        database.notifyRunsChanged();
        filter.sort(RunsModel::Peak, Qt::DescendingOrder);
        filter.setText(QStringLiteral("batch"));
        filter.setStatusFilter(QStringLiteral("completed"));
        filter.setText({});
        filter.setStatusFilter({});
        QCOMPARE(filter.rowCount(), 4);
    }

    // Runs are found by any of their settings: the dataset's path, a key=value, a tag.
    void theFilterFindsARunByItsDatasetAndItsTags() {
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        RunsFilterModel filter;
        filter.setSourceModel(&model);
        const auto only = [&](const QString& text) {
            filter.setText(text);
            return filter.rowCount() == 1 ? filter.index(0, RunsModel::Id).data().toLongLong()
                                          : -qlonglong(filter.rowCount());
        };
        QCOMPARE(only(QStringLiteral("imdb")), qlonglong(m_imdb));
        QCOMPARE(only(QStringLiteral("train.batch_size=512")), qlonglong(m_oom));
        const int row = model.rowOfRun(m_small);
        QVERIFY(model.setData(model.index(row, RunsModel::Tags), QStringLiteral("baseline, demo")));
        QCOMPARE(only(QStringLiteral("demo")), qlonglong(m_small));
        QCOMPARE(RunStore::open(m_path.toStdString()).find_run(m_small)->tags, "baseline, demo");
        filter.setText({});
    }

    // A run that adapted says so: the batch it ended with, and what it started from.
    void anAdaptedRunShowsTheBatchItEndedWith() {
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        const int row = model.rowOfRun(m_imdb);
        QCOMPARE(model.index(row, RunsModel::Batch).data().toString(),
                 QStringLiteral("16×4 (adapted from 64)"));
        QCOMPARE(model.index(row, RunsModel::Batch).data(RunsModel::SortRole).toInt(), 64);
        QVERIFY(model.index(row, RunsModel::Batch)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("ended with 16 × 4")));
        QCOMPARE(model.index(row, RunsModel::Dataset).data().toString(), QStringLiteral("train"));
        QCOMPARE(model.index(row, RunsModel::Embeddings).data().toString(),
                 QStringLiteral("6B.50d (default)"));
    }

    void showsTheRunsValues() {
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        const int row = model.rowOfRun(m_big);
        QVERIFY(row >= 0);
        QCOMPARE(model.index(row, RunsModel::Name).data().toString(), QStringLiteral("big batch"));
        QCOMPARE(model.index(row, RunsModel::Status).data().toString(),
                 QStringLiteral("completed"));
        QCOMPARE(model.index(row, RunsModel::Batch).data().toString(), QStringLiteral("256"));
        QCOMPARE(model.index(row, RunsModel::Peak).data().toString(), QStringLiteral("300.0 MiB"));
        QCOMPARE(model.index(row, RunsModel::Peak).data(RunsModel::SortRole).toLongLong(),
                 300LL << 20);
        QCOMPARE(model.index(row, RunsModel::FinalLoss).data().toString(),
                 QStringLiteral("0.7000"));
        const int oomRow = model.rowOfRun(m_oom);
        QCOMPARE(model.index(oomRow, RunsModel::Cap).data().toString(), QStringLiteral("64 MiB"));
        QVERIFY(model.index(oomRow, RunsModel::Status)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("forward"));
    }

    void sortsByRawValuesAndFilters() {
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        RunsFilterModel filter;
        filter.setSourceModel(&model);
        filter.sort(RunsModel::Peak, Qt::AscendingOrder);
        // "10.0 MiB" < "300.0 MiB" < "64.0 MiB" as text; by bytes the order is 10, 64, 300.
        QCOMPARE(filter.index(0, RunsModel::Id).data().toLongLong(), qlonglong(m_small));
        QCOMPARE(filter.index(1, RunsModel::Id).data().toLongLong(), qlonglong(m_oom));
        QCOMPARE(filter.index(2, RunsModel::Id).data().toLongLong(), qlonglong(m_big));

        filter.setStatusFilter(QStringLiteral("oom"));
        QCOMPARE(filter.rowCount(), 1);
        QCOMPARE(filter.index(0, RunsModel::Id).data().toLongLong(), qlonglong(m_oom));
        filter.setStatusFilter({});
        filter.setText(QStringLiteral("BATCH 256"));  // words anywhere in the row, any case
        QCOMPARE(filter.rowCount(), 1);
        QCOMPARE(filter.index(0, RunsModel::Id).data().toLongLong(), qlonglong(m_big));
        filter.setText(QStringLiteral("no such run"));
        QCOMPARE(filter.rowCount(), 0);
    }

    void renameAndNotesReachTheDatabase() {
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        const int row = model.rowOfRun(m_small);
        QVERIFY(model.flags(model.index(row, RunsModel::Name)) & Qt::ItemIsEditable);
        QVERIFY(!(model.flags(model.index(row, RunsModel::Peak)) & Qt::ItemIsEditable));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QVERIFY(model.setData(model.index(row, RunsModel::Name), QStringLiteral("renamed")));
        QVERIFY(
            model.setData(model.index(row, RunsModel::Notes), QStringLiteral("fits\nsecond line")));
        QCOMPARE(changed.count(), 2);
        QVERIFY(!model.setData(model.index(row, RunsModel::Name), QString()));  // names stay

        const RunStore store = RunStore::open(m_path.toStdString());
        const auto run = store.find_run(m_small);
        QVERIFY(run.has_value());
        QCOMPARE(QString::fromStdString(run->name), QStringLiteral("renamed"));
        QCOMPARE(QString::fromStdString(run->notes), QStringLiteral("fits\nsecond line"));
        QCOMPARE(model.index(row, RunsModel::Notes).data().toString(), QStringLiteral("fits"));
    }

    // A run its trainer still writes is not deleted from the Runs page: the others are, and
    // the refusal says which process trains it.
    void deletingARunStillTrainingIsRefusedWithTheReason() {
        RunStore trainer = RunStore::open(m_path.toStdString());
        const std::int64_t training =
            trainer.create_run({"training", "{}", "cpu", "0.1.0", "1.13"});
        const std::int64_t done = addRun("done", 8, RunStatus::Completed, 1 << 20, 1.0);
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsPage page(&database);
        page.selectRuns({training, done});
        QCOMPARE(page.selectedRunIds().size(), 2);
        QVERIFY(page.deleteSelected(/*confirm=*/false));
        QCOMPARE(page.deleteRefusals().size(), 1);
        QVERIFY2(page.deleteRefusals().front().contains(QStringLiteral("is still training")),
                 qPrintable(page.deleteRefusals().front()));
        QVERIFY(page.model()->rowOfRun(training) >= 0);
        QCOMPARE(page.model()->rowOfRun(done), -1);
        trainer.finish_run(training, RunOutcome{});
        page.selectRuns({training});
        QVERIFY(page.deleteSelected(false));
        QVERIFY(page.deleteRefusals().isEmpty());
    }

    // A run whose stored settings do not parse, or that records more processes than the
    // workbench starts, is neither loaded nor run again: the refusal says why (it loaded the
    // defaults with 8 processes, and Re-run trained them).
    void aRunThatCannotBeReproducedIsRefusedWithTheReason() {
        const QString path = m_dir.filePath("unreadable.sqlite");
        std::int64_t unreadable = 0;
        std::int64_t huge = 0;
        {
            RunStore store = RunStore::open(path.toStdString());
            unreadable = store.create_run(
                {"unreadable", R"({"train": {"batch_size": "many"}})", "cpu", "0.1.0", "1.13"});
            huge = store.create_run(
                {"huge", config_to_json(ExperimentConfig()), "cpu", "0.1.0", "1.13", 1000000});
            store.finish_run(unreadable, RunOutcome{});
            store.finish_run(huge, RunOutcome{});
        }
        RunDatabase database;
        QCOMPARE(database.open(path), QString());
        RunsPage page(&database);
        QSignalSpy loaded(&page, &RunsPage::configRequested);
        QSignalSpy rerun(&page, &RunsPage::rerunRequested);
        page.selectRuns({unreadable});
        page.loadSelected();
        QVERIFY2(page.reuseRefusal().contains(QStringLiteral("train.batch_size")),
                 qPrintable(page.reuseRefusal()));
        page.rerunSelected();
        QVERIFY(page.reuseRefusal().contains(QStringLiteral("cannot be read")));
        page.selectRuns({huge});
        page.rerunSelected();
        QVERIFY2(page.reuseRefusal().contains(QStringLiteral("1000000 processes")),
                 qPrintable(page.reuseRefusal()));
        page.loadSelected();
        QVERIFY(!page.reuseRefusal().isEmpty());
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(rerun.count(), 0);
    }

    // A double-click on an editable cell of a row not yet selected edits that cell, even when
    // another run changes between its two clicks (a run finishing): the columns kept their
    // widths, so the second click did not land on another column and open Compare instead,
    // losing what was typed.
    void aDoubleClickOnATagsCellEditsItWhateverChangesMeanwhile() {
        const QString path = m_dir.filePath("double_click.sqlite");
        std::int64_t first = 0;
        std::int64_t second = 0;
        {
            RunStore store = RunStore::open(path.toStdString());
            first = store.create_run({"a", "{}", "cpu", "0.1.0", "1.13"});
            second = store.create_run({"b", "{}", "cpu", "0.1.0", "1.13"});
            store.finish_run(first, RunOutcome{});
            store.finish_run(second, RunOutcome{});
        }
        ShownRunsPage shown(path);
        QCOMPARE(shown.opened, QString());
        QVERIFY(shown.exposed);
        RunDatabase& database = shown.database;
        RunsPage& page = shown.page;
        QSignalSpy compared(&page, &RunsPage::compareRequested);
        QTableView* view = page.view();
        QVERIFY(view);
        // Where the user points, for both clicks.
        const QPoint tags = view->visualRect(page.filterModel()->mapFromSource(page.model()->index(
                                                 page.model()->rowOfRun(first), RunsModel::Tags)))
                                .center();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, tags);
        // Between the clicks: the other run gets a long name, as when a run finishes.
        database.store().rename_run(second, std::string(80, 'n'));
        database.notifyRunsChanged();
        QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, tags);
        QCOMPARE(compared.count(), 0);
        // The cell's editor, not the search field.
        QTRY_VERIFY(QApplication::focusWidget() &&
                    QApplication::focusWidget()->parentWidget() == view->viewport());
        QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("baseline"));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Return);
        // The delegate commits on its next turn of the event loop.
        QTRY_COMPARE(database.store().find_run(first)->tags, std::string("baseline"));
        QCOMPARE(database.store().find_run(first)->name, std::string("a"));
        // On a cell that is not edited, a double-click opens the run.
        const int row = page.model()->rowOfRun(first);
        const QRect id = view->visualRect(
            page.filterModel()->mapFromSource(page.model()->index(row, RunsModel::Id)));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, id.center());
        QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, id.center());
        QCOMPARE(compared.count(), 1);
    }

    // A run shown while it trains, then ended: its status and figures are read whole. The
    // columns were fitted to "running" and kept when a row changed: "complet…" was shown.
    void aRunThatEndsIsReadWhole() {
        const QString path = m_dir.filePath("ends.sqlite");
        RunStore writer = RunStore::open(path.toStdString());  // its lock says it trains
        const std::int64_t id = writer.create_run({"a", "{}", "cpu", "0.1.0", "1.13"});
        ShownRunsPage shown(path);
        QCOMPARE(shown.opened, QString());
        QVERIFY(shown.exposed);
        QTableView* view = shown.page.view();
        const auto statusCell = [&] {
            return shown.page.filterModel()->mapFromSource(
                shown.page.model()->index(shown.page.model()->rowOfRun(id), RunsModel::Status));
        };
        QTRY_COMPARE(statusCell().data().toString(), QStringLiteral("running"));
        RunOutcome outcome;  // completed
        outcome.peak_bytes = std::int64_t{123456} << 20;
        outcome.final_train_loss = 1.234567;
        writer.finish_run(id, outcome);
        shown.database.notifyRunsChanged();
        QTRY_COMPARE(statusCell().data().toString(), QStringLiteral("completed"));
        for (const int column : {int(RunsModel::Status), int(RunsModel::Peak)}) {
            const QModelIndex cell = statusCell().siblingAtColumn(column);
            QTRY_VERIFY2(view->columnWidth(column) >= view->sizeHintForIndex(cell).width(),
                         qPrintable(QStringLiteral("\"%1\" in %2 px, its text %3 px")
                                        .arg(cell.data().toString())
                                        .arg(view->columnWidth(column))
                                        .arg(view->sizeHintForIndex(cell).width())));
        }
    }

    // A run out of memory opens with the runs that tried its fixes, and a fix run with the run
    // it fixes and the other fixes tried (a lone OOM run opened an empty compare); its
    // details say what each fix measured against its prediction.
    void aDoubleClickOpensARunWithItsFixes() {
        const QString path = m_dir.filePath("fixes.sqlite");
        std::int64_t failed = 0;
        std::int64_t frozen = 0;
        std::int64_t halved = 0;
        std::int64_t other = 0;
        {
            RunStore store = RunStore::open(path.toStdString());
            failed = store.create_run({"big", "{}", "cpu", "0.1.0", "1.13"});
            RunOutcome oom;
            oom.status = RunStatus::Oom;
            oom.peak_bytes = 20 << 20;
            store.finish_run(failed, oom);
            OomFix freeze;
            freeze.set = {{"embeddings.trainable", "false"}};
            freeze.predicted_peak_bytes = 9 << 20;
            store.set_fixes(failed, oom_fixes_json({freeze}));
            frozen = store.create_run({"big + embeddings.trainable=false",
                                       R"({"embeddings": {"trainable": false}})", "cpu", "0.1.0",
                                       "1.13"});
            RunOutcome fits;
            fits.peak_bytes = 10 << 20;
            fits.val_accuracy = 0.5;
            store.finish_run(frozen, fits);
            store.set_fix_of(frozen, failed);
            halved = store.create_run({"big + train.batch_size=16", "{}", "cpu", "0.1.0", "1.13"});
            store.finish_run(halved, fits);
            store.set_fix_of(halved, failed);
            other = store.create_run({"unrelated", "{}", "cpu", "0.1.0", "1.13"});
            store.finish_run(other, fits);
        }
        ShownRunsPage shown(path);
        QCOMPARE(shown.opened, QString());
        QVERIFY(shown.exposed);
        RunsPage& page = shown.page;
        QSignalSpy compared(&page, &RunsPage::compareRequested);
        QTableView* view = page.view();
        const auto doubleClick = [&](std::int64_t run) {
            const QPoint at =
                view->visualRect(page.filterModel()->mapFromSource(page.model()->index(
                                     page.model()->rowOfRun(run), RunsModel::Id)))
                    .center();
            QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
            QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
        };
        const QVector<qint64> family{failed, frozen, halved};
        doubleClick(failed);
        QCOMPARE(compared.count(), 1);
        QCOMPARE(compared.at(0).at(0).value<QVector<qint64>>(), family);
        doubleClick(halved);
        QCOMPARE(compared.at(1).at(0).value<QVector<qint64>>(), family);
        doubleClick(other);
        QCOMPARE(compared.at(2).at(0).value<QVector<qint64>>(), QVector<qint64>{other});
        page.selectRuns({frozen});
        QVERIFY2(page.detailsText().contains(
                     QStringLiteral(
                         "Tries a fix offered to run %1: predicted 9.0 MiB → measured 10.0 MiB")
                         .arg(failed)),
                 qPrintable(page.detailsText()));
    }

    void deleteIsSeenAfterReload() {
        const std::int64_t extra = addRun("to delete", 8, RunStatus::Cancelled, 1 << 20, 2.0);
        RunDatabase database;
        QCOMPARE(database.open(m_path), QString());
        RunsModel model(&database);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int before = model.rowCount();
        QVERIFY(model.rowOfRun(extra) >= 0);
        QVERIFY(database.store().delete_run(extra));
        database.notifyRunsChanged();
        QCOMPARE(model.rowCount(), before - 1);
        QCOMPARE(model.rowOfRun(extra), -1);
    }
};

OOMLAB_UI_TEST(RunsModelTest)
#include "runs_model_test.moc"
