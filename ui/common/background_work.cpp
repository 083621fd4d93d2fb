#include "common/background_work.h"

#include <QThreadPool>

#include <algorithm>

namespace oomlab::ui {

void letBackgroundWorkWait() {
    QThreadPool* pool = QThreadPool::globalInstance();
    pool->setMaxThreadCount(std::max(pool->maxThreadCount(), 4));
}

}  // namespace oomlab::ui
