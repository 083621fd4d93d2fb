// The experiment panel: one control per registry key with its help as tooltip, the engine's
// errors shown inline before Run, settings that do not apply greyed out, the dataset
// preview, the GloVe cost and the predicted breakdown.
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QtTest>

#include "common/formatting.h"
#include "experiment/config_form.h"
#include "experiment/dataset_preview.h"
#include "experiment/dataset_rows_model.h"
#include "experiment/estimate_view.h"
#include "experiment/experiment_panel.h"
#include "experiment/glove_cost.h"
#include "experiment/key_editor.h"
#include "experiment/key_labels.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/estimator/estimator.h"
#include "plots/breakdown_chart.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

// One notch of a mouse wheel turned towards the user, over the middle of `widget`; whether
// the widget took it (a wheel event it ignores goes on to its parents, the scroll area).
bool wheelDown(QWidget* widget) {
    const QPointF at = QRectF(widget->rect()).center();
    QWheelEvent event(at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
    return event.isAccepted();
}

}  // namespace

class ConfigFormTest : public QObject {
    Q_OBJECT

private slots:
    void everyRegistryKeyHasAControlWithItsHelp() {
        ConfigForm form;
        for (const ConfigKeyInfo& info : config_keys()) {
            KeyEditor* editor = form.editor(QString::fromStdString(info.name));
            QVERIFY2(editor, info.name.c_str());
            // A label people read, never one made from the key ("Bucket mb", "Timeout s").
            QVERIFY2(hasOwnLabel(QString::fromStdString(info.name)), info.name.c_str());
            QVERIFY(editor->toolTip().contains(QString::fromStdString(info.help).toHtmlEscaped()));
            QCOMPARE(editor->text(),
                     QString::fromStdString(get_config_value(form.config(), info.name)));
        }
        // Integer keys get spin boxes with the registry's range; 0 reads as its meaning.
        auto* cap = form.editor(QStringLiteral("memory.cap_mb"))->findChild<QSpinBox*>();
        QVERIFY(cap);
        QCOMPARE(cap->minimum(), 0);
        QCOMPARE(cap->specialValueText(), QStringLiteral("no cap"));
        QCOMPARE(cap->suffix(), QStringLiteral(" MiB"));
        auto* batch = form.editor(QStringLiteral("train.batch_size"))->findChild<QSpinBox*>();
        QCOMPARE(batch->minimum(), 1);
        QCOMPARE(KeyEditor::zeroMeaning(QStringLiteral("Stop after N steps; 0: run train.epochs.")),
                 QStringLiteral("run train.epochs"));
    }

    void editsChangeTheConfig() {
        ConfigForm form;
        QSignalSpy changed(&form, &ConfigForm::configChanged);
        QVERIFY(form.setValue(QStringLiteral("train.batch_size"), QStringLiteral("64")));
        QVERIFY(form.setValue(QStringLiteral("memory.precision"), QStringLiteral("bf16")));
        QVERIFY(form.setValue(QStringLiteral("embeddings.vocab"), QStringLiteral("top:5000")));
        QCOMPARE(form.config().train.batch_size, 64);
        QCOMPARE(form.config().memory.precision, DType::Bf16);
        QCOMPARE(form.config().embeddings.vocab, VocabMode::Top);
        QCOMPARE(form.config().embeddings.top_n, 5000);
        QCOMPARE(changed.count(), 3);
        QCOMPARE(form.editor(QStringLiteral("embeddings.vocab"))->text(),
                 QStringLiteral("top:5000"));
    }

    void badValueIsShownInlineAndKeepsTheLastGoodOne() {
        ConfigForm form;
        QVERIFY(!form.setValue(QStringLiteral("embeddings.vocab"), QStringLiteral("some")));
        QVERIFY(form.keyError(QStringLiteral("embeddings.vocab")).contains("embeddings.vocab"));
        auto* error = form.findChild<QLabel*>(QStringLiteral("error:embeddings.vocab"));
        QVERIFY(error && !error->isHidden());
        QCOMPARE(form.config().embeddings.vocab, VocabMode::Dataset);
        QVERIFY(!form.isValid());
        QVERIFY(form.setValue(QStringLiteral("embeddings.vocab"), QStringLiteral("full")));
        QVERIFY(error->isHidden());
        QVERIFY(form.isValid());
    }

    void invalidCombinationDisablesRun() {
        ExperimentPanel panel;
        QSignalSpy validity(&panel, &ExperimentPanel::validityChanged);
        ConfigForm* form = panel.form();
        QVERIFY(form->setValue(QStringLiteral("model.kind"), QStringLiteral("transformer")));
        QVERIFY(form->setValue(QStringLiteral("model.heads"), QStringLiteral("3")));  // 128 % 3
        QVERIFY(form->validationError().contains(QStringLiteral("model.heads")));
        QVERIFY(!panel.isValid());
        QVERIFY(!panel.runButton()->isEnabled());
        auto* banner = panel.findChild<QLabel*>(QStringLiteral("validationBanner"));
        QVERIFY(!banner->isHidden());
        QVERIFY(banner->text().contains(QStringLiteral("divisible")));
        QVERIFY(!validity.isEmpty());
        QCOMPARE(validity.last().at(0).toBool(), false);
        QVERIFY(form->setValue(QStringLiteral("model.heads"), QStringLiteral("4")));
        QVERIFY(panel.isValid());
        QVERIFY(panel.runButton()->isEnabled());
        QVERIFY(banner->isHidden());
    }

    // Settings several processes refuse disable Run only while several are chosen.
    void whatSeveralProcessesRefuseDisablesRun() {
        ExperimentPanel panel;
        ConfigForm* form = panel.form();
        QVERIFY(form->setValue(QStringLiteral("train.optimizer"), QStringLiteral("sgd")));
        QVERIFY(form->setValue(QStringLiteral("embeddings.sparse_grad"), QStringLiteral("true")));
        QVERIFY(panel.isValid());
        panel.processesBox()->setValue(2);
        QVERIFY(!panel.isValid());
        QVERIFY(!panel.runButton()->isEnabled());
        QVERIFY(panel.validationError().contains(QStringLiteral("embeddings.sparse_grad")));
        auto* banner = panel.findChild<QLabel*>(QStringLiteral("validationBanner"));
        QVERIFY(!banner->isHidden());
        QVERIFY(banner->text().contains(QStringLiteral("several processes")));
        panel.processesBox()->setValue(1);
        QVERIFY(panel.isValid());
        QVERIFY(panel.runButton()->isEnabled());
        QVERIFY(banner->isHidden());
    }

    // The wheel over the form's controls changes nothing: each passes it on, so that it
    // scrolls the form; also a control the user has chosen (clicked, then scrolled past: it
    // came under the pointer and took the wheel), which the keys still change.
    void theWheelNeverChangesASetting() {
        ExperimentPanel panel;
        panel.resize(420, 500);
        panel.show();
        panel.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&panel));
        auto* vocab =
            panel.form()->editor(QStringLiteral("embeddings.vocab"))->findChild<QComboBox*>();
        auto* batch =
            panel.form()->editor(QStringLiteral("train.batch_size"))->findChild<QSpinBox*>();
        const QList<QWidget*> controls{vocab, batch, panel.processesBox()};
        const ExperimentConfig before = panel.config();
        for (QWidget* control : controls) {
            QVERIFY(control);
            QCOMPARE(control->focusPolicy(), Qt::StrongFocus);  // the wheel does not choose it
            QVERIFY(!wheelDown(control));
            QCOMPARE(config_to_json(panel.config()), config_to_json(before));
            QCOMPARE(panel.processes(), 1);
        }
        // Chosen (Tab or a click gives it focus), the spin box still passes the wheel on, and
        // steps with the arrow keys.
        batch->setFocus(Qt::TabFocusReason);
        QVERIFY(batch->hasFocus());
        QVERIFY(!wheelDown(batch));
        QCOMPARE(panel.config().train.batch_size, before.train.batch_size);
        QTest::keyClick(batch, Qt::Key_Down);
        QCOMPARE(panel.config().train.batch_size, before.train.batch_size - 1);
    }

    void settingsThatDoNotApplyAreGreyedOut() {
        ConfigForm form;
        QVERIFY(!form.editor(QStringLiteral("model.heads"))->isEnabled());  // bag model
        QVERIFY(!form.editor(QStringLiteral("embeddings.path"))->isEnabled());
        QVERIFY(form.setValue(QStringLiteral("model.kind"), QStringLiteral("transformer")));
        QVERIFY(form.editor(QStringLiteral("model.heads"))->isEnabled());
        QVERIFY(!form.editor(QStringLiteral("model.hidden"))->isEnabled());
        // Sharding and the collectives' timeout mean something to several processes only.
        QVERIFY(!form.editor(QStringLiteral("distributed.shard"))->isEnabled());
        form.setProcesses(2);
        QVERIFY(form.editor(QStringLiteral("distributed.shard"))->isEnabled());
        QVERIFY(form.editor(QStringLiteral("distributed.timeout_s"))->isEnabled());
    }

    // The panel's figures are the estimator's: the table's rows include <pad> and <unk>, and
    // the optimizer's state is kept in the table's dtype.
    void gloveCostFollowsTheShape() {
        ExperimentConfig config;
        config.embeddings.variant = "6B.300d";
        config.embeddings.vocab = VocabMode::Full;
        config.train.optimizer = OptimizerKind::Adam;
        const std::int64_t rows = 400000 + 2;
        const GloveCost cost = gloveCost(config);
        QCOMPARE(cost.rows, rows);
        QCOMPARE(cost.tableBytes, rows * 300 * 4);
        QCOMPARE(cost.trainingBytes, rows * 300 * 4 * 3);  // gradient + 2 moments
        config.embeddings.dtype = DType::Fp16;
        QCOMPARE(gloveCost(config).tableBytes, rows * 300 * 2);
        QCOMPARE(gloveCost(config).trainingBytes, rows * 300 * 2 * 3);
        DataProfile profile;
        profile.vocab_rows = rows;
        profile.embedding_dim = 300;
        const MemoryEstimate estimate = estimate_memory(config, profile);
        QCOMPARE(gloveCost(config).tableBytes, estimate.breakdown.embedding_table);
        config.embeddings.trainable = false;
        QCOMPARE(gloveCost(config).trainingBytes, std::int64_t(0));
        QVERIFY(gloveCostText(config).contains(QStringLiteral("400")));
    }

    void gloveCostShowsTheFileNotTheVariantName() {
        ExperimentConfig config;
        config.embeddings.variant = "6B.50d";  // left at the default, while the file is 100d
        config.embeddings.source = EmbeddingSource::File;
        config.embeddings.path = "glove.6B.100d.txt";
        DataProfile profile;
        profile.embedding_dim = 100;
        profile.vector_rows = 400000;
        profile.vocab_rows = 8002;
        profile.dataset_words = 8000;
        profile.words_with_vector = 7000;
        const GloveCost cost = gloveCost(config, &profile);
        QCOMPARE(cost.dim, 100);
        QCOMPARE(cost.tableBytes, std::int64_t(8002) * 100 * 4);
        const QString text = gloveCostText(config, &profile);
        QVERIFY2(text.contains(QStringLiteral("400,000 words × 100 dimensions")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("7,000 of the dataset's 8,000 words have a vector "
                                              "(87.5%)")),
                 qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("6B.50d")));
    }

    // Every field either holds a value the engine will use or is marked with the reason, and
    // Run stays disabled; the reason shows beside the field.
    void aValueTheEngineWillNotUseDisablesRun_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("reason");
        QTest::newRow("ratio above its range") << "dataset.valid_ratio"
                                               << "1.5"
                                               << "0.9";
        QTest::newRow("negative learning rate") << "train.lr"
                                                << "-1"
                                                << "from 0";
        QTest::newRow("dropout past its range") << "model.dropout"
                                                << "0.99"
                                                << "0.95";
        QTest::newRow("missing training data") << "dataset.path"
                                               << "/nonexistent/train.tsv"
                                               << "does not exist";
        QTest::newRow("missing validation data") << "dataset.valid_path"
                                                 << "/nonexistent/valid.tsv"
                                                 << "does not exist";
        QTest::newRow("missing GloVe file") << "embeddings.path"
                                            << "/nonexistent/glove.txt"
                                            << "does not exist";
    }

    void aValueTheEngineWillNotUseDisablesRun() {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, reason);
        ExperimentPanel panel;
        ExperimentConfig config = test::tinyConfig();
        config.embeddings.source = EmbeddingSource::File;  // so embeddings.path is read
        config.embeddings.path =
            test::fixture(QStringLiteral("glove/glove_6b_50d_sample.txt")).toStdString();
        panel.setConfig(config);
        auto* run = panel.findChild<QPushButton*>(QStringLiteral("runButton"));
        QTRY_VERIFY(run->isEnabled());
        // Typed into the field, as a user would, and confirmed with Enter.
        KeyEditor* editor = panel.form()->editor(key);
        auto* line = editor->findChild<QLineEdit*>();
        QVERIFY(line);
        line->setFocus();
        line->selectAll();
        QTest::keyClicks(line, value);
        QTest::keyClick(line, Qt::Key_Return);
        QCOMPARE(line->text(), value);  // the field shows what was typed ...
        QVERIFY(!run->isEnabled());     // ... and Run is off until it is fixed
        auto* error = panel.findChild<QLabel*>(QStringLiteral("error:") + key);
        QVERIFY(error && error->isVisibleTo(&panel));
        QVERIFY2(error->text().contains(reason), qPrintable(error->text()));
        // Setting a valid value again turns Run back on.
        QVERIFY(panel.form()->setValue(
            key, QString::fromStdString(get_config_value(config, key.toStdString()))));
        QTRY_VERIFY(run->isEnabled());
    }

    void datasetPreviewDetectsTheFormat() {
        const QString file = test::fixture(QStringLiteral("datasets/trec_style.txt"));
        const DatasetPreviewData data = readDatasetPreview(file, DatasetFormat::Auto, 4);
        QVERIFY2(data.error.isEmpty(), qPrintable(data.error));
        QCOMPARE(data.format, QStringLiteral("label-space-text"));
        QCOMPARE(data.examples, qint64(6));
        QCOMPARE(data.rows.size(), 4);
        QCOMPARE(data.rows.front().first, QStringLiteral("10"));
        QCOMPARE(data.rows.front().second, QStringLiteral("How far is it from Denver to Aspen ?"));
        QCOMPARE(data.labelCounts.size(), 3);
        for (const auto& [label, count] : data.labelCounts) {
            QCOMPARE(count, qint64(2));
        }
        const DatasetPreviewData missing =
            readDatasetPreview(QStringLiteral("/no/such/file.tsv"), DatasetFormat::Auto, 4);
        QVERIFY(missing.error.contains(QStringLiteral("/no/such/file.tsv")));

        DatasetPreview preview;  // the widget reads on a pool thread
        QSignalSpy ready(&preview, &DatasetPreview::previewReady);
        preview.setDataset(file, DatasetFormat::Auto);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 20000);
        QCOMPARE(preview.data().examples, qint64(6));
        QCOMPARE(preview.rows()->rowCount(), 6);  // all of them: up to 8 are shown
        QCOMPARE(preview.rows()->index(0, DatasetRowsModel::Text).data().toString(),
                 QStringLiteral("How far is it from Denver to Aspen ?"));
    }

    void predictedBreakdownMatchesTheEstimator() {
        EstimateView view;
        QSignalSpy estimated(&view, &EstimateView::estimateChanged);
        ExperimentConfig config = test::tinyConfig();
        config.model.kind = ModelKind::Transformer;  // activations dominate its peak
        config.memory.cap_mb = 8;
        view.setConfig(config);
        QTRY_VERIFY_WITH_TIMEOUT(estimated.count() >= 1, 30000);
        QVERIFY(view.hasEstimate());
        const MemoryEstimate estimate = view.estimate();  // a copy: the view updates its own
        QVERIFY(estimate.peak_bytes > 0);
        QCOMPARE(estimate.cap_bytes, std::int64_t(8) << 20);
        QCOMPARE(view.chart()->barCount(), 1);
        QCOMPARE(view.chart()->valueMiB(0, 0),
                 double(estimate.breakdown.embedding_table) / (1 << 20));
        // A setting the profile does not depend on: a new estimate without re-reading data.
        config.train.batch_size = 256;
        view.setConfig(config);
        QTRY_VERIFY_WITH_TIMEOUT(estimated.count() >= 2, 10000);
        QVERIFY(view.estimate().breakdown.activations > estimate.breakdown.activations);
        QVERIFY(view.estimate().peak_bytes > estimate.peak_bytes);
        QVERIFY(!view.estimate().fits);  // far beyond 8 MiB

        // One rank of two with the optimizer state sharded: the estimator's per-rank figure.
        config.distributed.shard = ShardMode::Optimizer;
        view.setConfig(config);
        view.setProcesses(2);
        QTRY_VERIFY_WITH_TIMEOUT(estimated.count() >= 3, 10000);
        const MemoryEstimate per_rank = estimate_memory(config, *view.profile(), 2);
        QCOMPARE(view.estimate().peak_bytes, per_rank.peak_bytes);
        QCOMPARE(view.estimate().breakdown.optimizer_state, per_rank.breakdown.optimizer_state);
        QVERIFY(per_rank.breakdown.optimizer_state <
                estimate_memory(config, *view.profile(), 1).breakdown.optimizer_state);
        auto* summary = view.findChild<QLabel*>();
        QVERIFY(summary->text().contains(QStringLiteral("per process (2 processes)")));
    }

    // With memory.alloc_conf the CPU run's tensors pass through the caching allocator's model:
    // the predicted bar has its cache, the text what it reserves, and a cap the tensors fit
    // under but the allocator's first large segment (20 MiB, for the 2.4 MiB table) does not
    // is called out as such.
    void predictedReservedShowsTheAllocatorsCache() {
        EstimateView view;
        QSignalSpy estimated(&view, &EstimateView::estimateChanged);
        ExperimentConfig config = test::tinyConfig();
        config.memory.alloc_conf = "backend:native";
        view.setConfig(config);
        QTRY_VERIFY_WITH_TIMEOUT(estimated.count() >= 1, 30000);
        const MemoryEstimate estimate = view.estimate();
        QVERIFY(estimate.caching_allocator);
        QVERIFY(estimate.breakdown.allocator_cache > 0);
        constexpr std::size_t kCache = 6;  // kBreakdownKeys: allocator_cache
        QCOMPARE(kBreakdownKeys[kCache], std::string_view("allocator_cache"));
        QCOMPARE(view.chart()->valueMiB(0, kCache),
                 double(estimate.breakdown.allocator_cache) / (1 << 20));
        auto* summary = view.findChild<QLabel*>();
        QVERIFY2(summary->text().contains(formatBytes(*estimate.reserved_bytes) +
                                          QStringLiteral("</b> reserved")),
                 qPrintable(summary->text()));

        config.memory.cap_mb = 16;
        view.setConfig(config);
        QTRY_VERIFY_WITH_TIMEOUT(estimated.count() >= 2, 10000);
        QVERIFY(view.estimate().peak_bytes < view.estimate().cap_bytes);
        QVERIFY(view.estimate().allocator_out_of_memory);
        QVERIFY2(summary->text().contains(QStringLiteral("the allocator's segments do not")),
                 qPrintable(summary->text()));
    }
};

OOMLAB_UI_TEST(ConfigFormTest)
#include "config_form_test.moc"
