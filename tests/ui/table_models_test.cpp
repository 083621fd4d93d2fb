// The models behind the workbench's tables, on their own: invariants
// (QAbstractItemModelTester) and what each cell says.
#include <QAbstractItemModelTester>
#include <QFont>
#include <QtTest>

#include "compare/settings_diff_model.h"
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
};

OOMLAB_UI_TEST_MAIN(TableModelsTest)
#include "table_models_test.moc"
