// The experiment panel's prediction says the estimator's record in the open database, and
// warns where a run of the same model measured more than it predicted.
#include <QApplication>
#include <QTemporaryDir>
#include <QtTest>

#include "experiment/estimate_view.h"
#include "experiment/experiment_panel.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/store/run_store.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;

class EstimatorRecordTest : public QObject {
    Q_OBJECT

private slots:
    void thePredictionSaysTheRecordAndAnEarlierMiss() {
        QTemporaryDir dir;
        const QString path = dir.filePath("runs.sqlite");
        {
            // A bag run that measured 25% more than its prediction.
            RunStore store = RunStore::open(path.toStdString());
            MemoryPrediction predicted;
            predicted.peak_bytes = 8 << 20;
            predicted.breakdown.activations = 8 << 20;
            ExperimentConfig config;
            const auto id = store.create_run({"under", config_to_json(config), "cpu", "test",
                                              "test", 1, prediction_json(predicted)});
            RunOutcome measured(RunStatus::Completed);
            measured.steps = 4;
            measured.peak_bytes = 10 << 20;
            measured.breakdown.activations = 10 << 20;
            store.finish_run(id, measured);
        }
        auto window = test::shownWindow(path);
        QVERIFY(window);
        EstimateView* view = window->experimentPanel()->estimateView();
        QTRY_VERIFY(view->hasEstimate());
        QVERIFY2(view->recordText().contains(
                     QStringLiteral("1 run here checked against the estimate: 1 needed more than "
                                    "it said, by at most 25.0%")),
                 qPrintable(view->recordText()));
        QVERIFY(view->recordText().contains(QStringLiteral("Wrong here before: run 1 (bag)")));
        // Another model: the record, without the bag run's miss.
        ExperimentConfig transformer = test::tinyConfig();
        apply_config_override(transformer, "model.kind=transformer");
        window->experimentPanel()->setConfig(transformer);
        QTRY_VERIFY(!view->recordText().contains(QStringLiteral("Wrong here before")));
        QVERIFY(view->recordText().contains(QStringLiteral("Record: 1 run here checked")));
    }
};

OOMLAB_UI_TEST(EstimatorRecordTest)
#include "estimator_record_test.moc"
