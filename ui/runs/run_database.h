// The GUI thread's connection to the run database. The training worker opens its own
// connection to the same file; this one reads runs and metrics and edits names and notes.
#pragma once

#include <QObject>
#include <QString>

#include <memory>

#include "oomlab/store/run_store.h"

namespace oomlab::ui {

class RunDatabase : public QObject {
    Q_OBJECT

public:
    explicit RunDatabase(QObject* parent = nullptr);
    ~RunDatabase() override;

    // Opens (creating if needed) `path`. Returns an empty string, or the error; the previous
    // database stays open on failure.
    QString open(const QString& path);
    bool isOpen() const { return m_store != nullptr; }
    QString path() const { return m_path; }
    RunStore& store() const { return *m_store; }

    // Tells the views that runs were added or changed (a run started, finished, was renamed).
    void notifyRunsChanged() { emit runsChanged(); }

signals:
    void opened(const QString& path);
    void runsChanged();

private:
    std::unique_ptr<RunStore> m_store;
    QString m_path;
};

}  // namespace oomlab::ui
