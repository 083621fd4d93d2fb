#include "runs/run_database.h"

#include "common/formatting.h"

namespace oomlab::ui {

RunDatabase::RunDatabase(QObject* parent) : QObject(parent) {}

RunDatabase::~RunDatabase() = default;

QString RunDatabase::open(const QString& path) {
    try {
        auto store = std::make_unique<RunStore>(RunStore::open(ss(path)));
        m_store = std::move(store);
        m_path = path;
    } catch (const std::exception& error) {
        return qs(error.what());
    }
    emit opened(m_path);
    emit runsChanged();
    return {};
}

}  // namespace oomlab::ui
