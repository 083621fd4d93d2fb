#include "ui_test_support.h"

#include <QCoreApplication>
#include <QSettings>

#include <utility>

namespace oomlab::ui::test {

void prepareEnvironment() {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
}

void isolateSettings(const QTemporaryDir& folder) {
    QCoreApplication::setOrganizationName(QStringLiteral("oomlab-test"));
    QCoreApplication::setApplicationName(QStringLiteral("oomlab-test"));
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, folder.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, folder.path());
}

MainWindowOptions windowOptions(const QString& databasePath,
                                std::optional<ExperimentConfig> config) {
    MainWindowOptions options;
    options.databasePath = databasePath;
    options.config = std::move(config);
    options.restoreSession = false;
    return options;
}

ExperimentConfig tinyConfig(int steps) {
    ExperimentConfig config;
    config.device = "cpu";
    config.train.max_steps = steps;
    config.eval.every = std::max(1, steps / 2);
    return config;
}

}  // namespace oomlab::ui::test
