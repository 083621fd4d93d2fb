#include "common/app_settings.h"

#include <QFileInfo>
#include <QSettings>

namespace oomlab::ui {

QString AppSettings::lastConfigJson() {
    return QSettings().value("experiment/config").toString();
}

void AppSettings::setLastConfigJson(const QString& json) {
    QSettings().setValue("experiment/config", json);
}

QString AppSettings::databasePath() {
    return QSettings().value("database/path").toString();
}

void AppSettings::setDatabasePath(const QString& path) {
    QSettings().setValue("database/path", path);
}

QStringList AppSettings::recentDatabases() {
    return QSettings().value("database/recent").toStringList();
}

void AppSettings::addRecentDatabase(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList recent = recentDatabases();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecentDatabases) {
        recent.removeLast();
    }
    QSettings().setValue("database/recent", recent);
}

QByteArray AppSettings::windowGeometry() {
    return QSettings().value("window/geometry").toByteArray();
}

QByteArray AppSettings::windowState() {
    return QSettings().value("window/state").toByteArray();
}

void AppSettings::setWindowLayout(const QByteArray& geometry, const QByteArray& state) {
    QSettings settings;
    settings.setValue("window/geometry", geometry);
    settings.setValue("window/state", state);
}

QVariant AppSettings::value(const QString& key, const QVariant& fallback) {
    return QSettings().value(key, fallback);
}

void AppSettings::setValue(const QString& key, const QVariant& value) {
    QSettings().setValue(key, value);
}

}  // namespace oomlab::ui
