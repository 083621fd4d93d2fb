// The CPU as a GPU in miniature, in the window: with the caching allocator modelled
// (memory.alloc_conf), a run that runs out of memory in pieces is explained as fragmentation,
// and its first fix, expandable segments, applies with one click and completes.
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "common/formatting.h"
#include "experiment/config_form.h"
#include "experiment/experiment_panel.h"
#include "live/failure_panel.h"
#include "live/live_page.h"
#include "live/run_controller.h"
#include "oomlab/config/config_keys.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class FragmentationWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

    RunEnd runAndWait() { return test::runAndWait(*m_window); }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(m_window);
    }

    // The CPU as a GPU in miniature: with the caching allocator modelled, a cap that holds the
    // run's tensors but not its segments ends in fragmentation, explained as such; the first
    // fix, expandable segments, applies with one click and completes, its cache plotted.
    void fragmentationIsExplainedAndExpandableSegmentsFixIt() {
        ConfigForm* form = m_window->experimentPanel()->form();
        ExperimentConfig config = test::tinyConfig(3);
        config.model.kind = ModelKind::Transformer;
        config.embeddings.source = EmbeddingSource::Synthetic;
        config.train.batch_size = 128;
        config.memory.cap_mb = 210;
        config.memory.alloc_conf = "backend:native";
        m_window->experimentPanel()->setConfig(config);
        const RunEnd end = runAndWait();
        QCOMPARE(statusName(end.status()), QStringLiteral("oom"));
        FailurePanel* panel = m_window->livePage()->failurePanel();
        QVERIFY2(panel->details().contains(QStringLiteral("enough memory, but fragmented")),
                 qPrintable(panel->details()));
        QVERIFY(!end.fixes.empty());
        QVERIFY(end.fixes.front().set ==
                (Settings{{"memory.alloc_conf", "expandable_segments:True"}}));
        QTest::mouseClick(panel->findChild<QPushButton*>(), Qt::LeftButton);
        QCOMPARE(get_config_value(form->config(), "memory.alloc_conf"),
                 std::string("expandable_segments:True"));
        const RunEnd fixed = runAndWait();
        QCOMPARE(statusName(fixed.status()), QStringLiteral("completed"));
        QVERIFY(fixed.outcome.breakdown.allocator_cache > 0);
        const auto rows =
            RunStore::open(m_dir.filePath("runs.sqlite").toStdString()).metrics(fixed.runId);
        QVERIFY(std::any_of(rows.begin(), rows.end(), [](const MetricRow& row) {
            return row.reserved_bytes && row.allocated_bytes &&
                   *row.reserved_bytes > *row.allocated_bytes;
        }));
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(FragmentationWindowTest)
#include "fragmentation_window_test.moc"
