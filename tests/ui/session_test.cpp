// What a session keeps: the experiment's config written and read back as JSON, and the
// training pace, watchable on a first start and kept between sessions.
#include <QFile>
#include <QtTest>

#include "common/app_settings.h"
#include "export/run_export.h"
#include "live/run_controller.h"
#include "oomlab/config/config_io.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class SessionTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void configRoundTripsThroughJson() {
        ExperimentConfig config = test::tinyConfig(7);
        config.train.optimizer = OptimizerKind::Momentum;
        const QString path = m_dir.filePath("config.json");
        QCOMPARE(saveConfigFile(config, path), QString());
        ExperimentConfig loaded;
        QString error;
        QVERIFY(loadConfigFile(path, loaded, error));
        QCOMPARE(loaded.train.max_steps, std::int64_t(7));
        QCOMPARE(loaded.train.optimizer, OptimizerKind::Momentum);
        QFile broken(m_dir.filePath("broken.json"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"train\": {\"batch_sise\": 3}}");
        broken.close();
        QVERIFY(!loadConfigFile(broken.fileName(), loaded, error));
        QVERIFY(error.contains(QStringLiteral("train.batch_size")));  // did you mean
    }

    void aFirstSessionTrainsWatchablyAndThePaceIsKept() {
        MainWindowOptions options;
        options.databasePath = m_dir.filePath("session.sqlite");
        options.restoreSession = true;  // a user's session, in the test's own settings
        {
            MainWindow first(options);
            QCOMPARE(first.controller()->pace(), RunController::Pace::Watchable);
            // The default experiment (3 epochs of 85 steps) then lasts several seconds.
            QVERIFY(RunController::stepPauseMs(RunController::Pace::Watchable) * 3 * 85 >= 5000);
            first.setTrainingPace(RunController::Pace::Full);
        }
        MainWindow second(options);
        QCOMPARE(second.controller()->pace(), RunController::Pace::Full);
        AppSettings::setValue(QStringLiteral("run/pace"), 17);  // a damaged setting
        MainWindow third(options);
        QCOMPARE(third.controller()->pace(), RunController::Pace::Watchable);
        // Windows that do not restore a session (tests, screenshots) train at full speed.
        const MainWindow plain(test::windowOptions(m_dir.filePath("plain.sqlite")));
        QCOMPARE(plain.controller()->pace(), RunController::Pace::Full);
    }
};

OOMLAB_UI_TEST(SessionTest)
#include "session_test.moc"
