// The models behind the workbench's tables, on their own: invariants
// (QAbstractItemModelTester) and what each cell says.
#include <QAbstractItemModelTester>
#include <QFont>
#include <QtTest>

#include "common/formatting.h"
#include "compare/compare_metrics_model.h"
#include "compare/memory_diff_model.h"
#include "compare/settings_diff_model.h"
#include "experiment/dataset_rows_model.h"
#include "live/module_table_model.h"
#include "live/prediction_model.h"
#include "oomlab/config/config_keys.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

CompareRun compareRun(qint64 id, int batchSize, bool configRead = true) {
    CompareRun run;
    run.record.id = id;
    run.record.name = "run " + std::to_string(id);
    run.config.train.batch_size = batchSize;
    run.configRead = configRead;
    return run;
}

int rowOf(const QAbstractItemModel& model, const QString& key) {
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.headerData(row, Qt::Vertical).toString() == key) {
            return row;
        }
    }
    return -1;
}

}  // namespace

class TableModelsTest : public QObject {
    Q_OBJECT

private slots:
    void countsReadAsEnglish() {
        QCOMPARE(plural(1, QStringLiteral("Loading %n run…"), QStringLiteral("Loading %n runs…")),
                 QStringLiteral("Loading 1 run…"));
        QCOMPARE(plural(3, QStringLiteral("Loading %n run…"), QStringLiteral("Loading %n runs…")),
                 QStringLiteral("Loading 3 runs…"));
        QCOMPARE(plural(0, QStringLiteral("%n run"), QStringLiteral("%n runs")),
                 QStringLiteral("0 runs"));
        QCOMPARE(formatSteps(1), QStringLiteral("1 step"));
        QCOMPARE(formatSteps(2), QStringLiteral("2 steps"));
    }

    void settingsDiffMarksTheKeysThatDiffer() {
        SettingsDiffModel model;
        model.setHighlight(Qt::blue);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns({compareRun(1, 32), compareRun(2, 64)});
        QCOMPARE(model.rowCount(), int(config_keys().size()));
        QCOMPARE(model.columnCount(), 2);
        QVERIFY(model.headerData(0, Qt::Horizontal).toString().startsWith(QStringLiteral("#1")));
        QCOMPARE(model.differingKeys(), QStringList{QStringLiteral("train.batch_size")});

        const int batch = rowOf(model, QStringLiteral("train.batch_size"));
        QVERIFY(batch >= 0);
        QVERIFY(model.rowDiffers(batch));
        QCOMPARE(model.data(model.index(batch, 0)).toString(), QStringLiteral("32"));
        QCOMPARE(model.data(model.index(batch, 1)).toString(), QStringLiteral("64"));
        QVERIFY(model.data(model.index(batch, 1), Qt::FontRole).value<QFont>().bold());
        QVERIFY(model.data(model.index(batch, 1), Qt::BackgroundRole).isValid());
        QVERIFY(!model.headerData(batch, Qt::Vertical, Qt::ToolTipRole).toString().isEmpty());

        const int lr = rowOf(model, QStringLiteral("train.lr"));
        QVERIFY(lr >= 0 && !model.rowDiffers(lr));
        QVERIFY(!model.data(model.index(lr, 0), Qt::FontRole).isValid());
        QVERIFY(!model.data(model.index(lr, 0), Qt::BackgroundRole).isValid());

        // A run whose config could not be read differs everywhere it cannot say: "?".
        model.setRuns({compareRun(1, 32), compareRun(3, 32, false)});
        QCOMPARE(model.data(model.index(lr, 1)).toString(), QStringLiteral("?"));
        QVERIFY(model.rowDiffers(lr));
        model.setRuns({});
        QCOMPARE(model.columnCount(), 0);
    }

    void compareMetricsShowEachRunsFinalFigures() {
        CompareMetricsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        CompareRun done = compareRun(1, 32);
        done.record.outcome.status = RunStatus::Completed;
        done.record.outcome.steps = 40;
        done.record.outcome.peak_bytes = 3 << 20;
        done.metrics.resize(2);
        done.metrics[0].samples_per_s = 100;
        done.metrics[1].samples_per_s = 300;
        CompareRun oom = compareRun(2, 64);
        oom.record.outcome.status = RunStatus::Oom;
        oom.record.outcome.error = "out of memory at step 3";
        model.setRuns({done, oom});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(CompareMetricsModel::Throughput) + 1);
        QCOMPARE(model.headerData(CompareMetricsModel::Peak, Qt::Horizontal).toString(),
                 QStringLiteral("Peak"));
        const auto cell = [&](int row, int column) { return model.index(row, column).data(); };
        QCOMPARE(cell(0, CompareMetricsModel::Status).toString(), QStringLiteral("completed"));
        QCOMPARE(cell(0, CompareMetricsModel::Steps).toString(), QStringLiteral("40"));
        QCOMPARE(cell(0, CompareMetricsModel::Peak).toString(), formatBytes(3 << 20));
        QCOMPARE(cell(0, CompareMetricsModel::Throughput).toString(), QStringLiteral("200"));
        QCOMPARE(cell(1, CompareMetricsModel::Throughput).toString(), QString());
        QCOMPARE(model.index(1, CompareMetricsModel::Status).data(Qt::ForegroundRole),
                 QVariant(statusColor(RunStatus::Oom)));
        QCOMPARE(model.index(1, CompareMetricsModel::Peak).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("out of memory at step 3"));
        QVERIFY(!model.index(0, CompareMetricsModel::Peak).data(Qt::ToolTipRole).isValid());
    }

    void predictionMarksWhatIsOffAndSaysWhy() {
        PredictionModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        MemoryPrediction predicted;
        predicted.peak_bytes = 10 << 20;
        predicted.breakdown.data = 1 << 20;
        predicted.breakdown.activations = 9 << 20;
        predicted.worst_batch_length = 37;
        predicted.by_module = {{"pooling", 0, 0, 0, 9 << 20}};
        RunOutcome run;
        run.peak_bytes = 10 << 20;
        run.breakdown.data = 10 << 10;
        run.breakdown.activations = 9 << 20;
        run.by_module = {{"pooling", 0, 0, 0, 9 << 20}};
        model.setCheck(check_prediction(predicted, run));
        // peak, data, activations; the module's activations.
        QCOMPARE(model.rowCount(), 4);
        const auto cell = [&](int row, int column) {
            return model.index(row, column).data().toString();
        };
        QCOMPARE(cell(0, PredictionModel::Figure), QStringLiteral("peak"));
        QCOMPARE(cell(1, PredictionModel::Figure), QStringLiteral("data"));
        QCOMPARE(cell(1, PredictionModel::Predicted), formatBytes(1 << 20));
        QCOMPARE(cell(1, PredictionModel::Measured), formatBytes(10 << 10));
        QCOMPARE(cell(1, PredictionModel::Off), QStringLiteral("-99%"));
        QVERIFY(cell(1, PredictionModel::Why).contains(QStringLiteral("37 tokens")));
        QVERIFY(model.index(1, 0).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(model.index(1, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("10%")));
        QCOMPARE(cell(2, PredictionModel::Off), QStringLiteral("+0%"));
        QVERIFY(!model.index(2, 0).data(Qt::FontRole).isValid());
        QCOMPARE(cell(3, PredictionModel::Figure), QStringLiteral("pooling · activations"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void moduleTableSkipsEmptyModulesAndTotalsTheRest() {
        ModuleTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setModules({{"embeddings", 4 << 20, 4 << 20, 0, 1 << 20},
                          {"dropout", 0, 0, 0, 0},
                          {"head", 1 << 20, 1 << 20, 2 << 20, 3 << 20}});
        QCOMPARE(model.rowCount(), 3);  // the empty dropout is left out, as in the chart
        const auto cell = [&](int row, int column) {
            return model.index(row, column).data().toString();
        };
        QCOMPARE(cell(0, ModuleTableModel::Module), QStringLiteral("embeddings"));
        QCOMPARE(cell(0, ModuleTableModel::Total), formatBytes(9 << 20));
        QCOMPARE(cell(1, ModuleTableModel::Module), QStringLiteral("head"));
        QCOMPARE(cell(1, ModuleTableModel::OptimizerState), formatBytes(2 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Module), QStringLiteral("all modules"));
        QCOMPARE(cell(2, ModuleTableModel::Parameters), formatBytes(5 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Activations), formatBytes(4 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Total), formatBytes(16 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Temporaries), formatBytes(0));
        QVERIFY(model.index(2, 0).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(!model.index(0, 0).data(Qt::FontRole).isValid());
        QCOMPARE(model.index(0, ModuleTableModel::Gradients).data(Qt::TextAlignmentRole),
                 QVariant(Qt::AlignRight | Qt::AlignVCenter));

        // The update's bytes are its temporaries, not activations of any layer.
        model.setModules({{"head", 1 << 20, 1 << 20, 0, 3 << 20}, {"optimizer", 0, 0, 0, 5 << 20}});
        QCOMPARE(cell(1, ModuleTableModel::Module), QStringLiteral("optimizer"));
        QCOMPARE(cell(1, ModuleTableModel::Activations), formatBytes(0));
        QCOMPARE(cell(1, ModuleTableModel::Temporaries), formatBytes(5 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Activations), formatBytes(3 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Temporaries), formatBytes(5 << 20));
        QCOMPARE(cell(2, ModuleTableModel::Total), formatBytes(10 << 20));
        QVERIFY(model.headerData(ModuleTableModel::Temporaries, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("not any layer's activations")));

        // On CUDA the allocator does not say which module a block is for: said, not 0 B.
        model.setModules({{"head", 1 << 20, 0, 0, std::nullopt}});
        QCOMPARE(cell(0, ModuleTableModel::Activations), QStringLiteral("not measured"));
        QCOMPARE(cell(1, ModuleTableModel::Activations), QStringLiteral("not measured"));
        QVERIFY(model.index(0, ModuleTableModel::Activations)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("CUDA")));
        model.setModules({});
        QCOMPARE(model.rowCount(), 0);
    }

    void memoryDiffHasASectionForCategoriesAndOneForModules() {
        MemoryDiffModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        MemoryDiff diff;
        diff.by_category = {{"activations", "", 40 << 20, 10 << 20}};
        model.setDiff(diff);
        QCOMPARE(model.rowCount(), 3);
        QVERIFY(model.isSection(0));
        QVERIFY(!model.isSection(1));
        QCOMPARE(model.index(1, MemoryDiffModel::Difference).data().toString(),
                 QStringLiteral("-30.0 MiB"));
        QVERIFY(!model.index(0, MemoryDiffModel::A).data().isValid());
        QVERIFY(model.index(0, 0).data(Qt::FontRole).value<QFont>().bold());
        // No module rows: the section says why.
        QVERIFY(model.index(2, 0)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("No difference by module")));
        diff.by_module = {{"parameters", "head", 0, 2 << 20}};
        model.setDiff(diff);
        QCOMPARE(model.index(3, MemoryDiffModel::Figure).data().toString(),
                 QStringLiteral("head · parameters"));
        QCOMPARE(model.index(3, MemoryDiffModel::Difference).data().toString(),
                 QStringLiteral("+2.0 MiB"));
        QVERIFY(!model.index(2, 0).data(Qt::ToolTipRole).isValid());
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void datasetRowsShowLabelAndTextWithTheWholeTextAsTooltip() {
        DatasetRowsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows({{QStringLiteral("pos"), QStringLiteral("a fine film")},
                       {QStringLiteral("neg"), QStringLiteral("not so")}});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.headerData(DatasetRowsModel::Label, Qt::Horizontal).toString(),
                 QStringLiteral("Label"));
        QCOMPARE(model.index(1, DatasetRowsModel::Label).data().toString(), QStringLiteral("neg"));
        QCOMPARE(model.index(0, DatasetRowsModel::Text).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("a fine film"));
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }
};

OOMLAB_UI_TEST(TableModelsTest)
#include "table_models_test.moc"
