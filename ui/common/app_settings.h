// What persists between sessions (QSettings): the last experiment, the database and the
// recent ones, window geometry and layout, view choices.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QVariant>

namespace oomlab::ui {

class AppSettings {
public:
    static constexpr int kMaxRecentDatabases = 8;

    static QString lastConfigJson();
    static void setLastConfigJson(const QString& json);

    static QString databasePath();  // empty: the engine's default
    static void setDatabasePath(const QString& path);
    static QStringList recentDatabases();
    static void addRecentDatabase(const QString& path);  // most recent first, no duplicates

    static QByteArray windowGeometry();
    static QByteArray windowState();
    static void setWindowLayout(const QByteArray& geometry, const QByteArray& state);

    // Small view choices ("compare/xAxis", "export/lastDir", splitter states, ...).
    static QVariant value(const QString& key, const QVariant& fallback = {});
    static void setValue(const QString& key, const QVariant& value);
};

}  // namespace oomlab::ui
