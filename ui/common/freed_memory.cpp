#include "common/freed_memory.h"

#include <malloc.h>

#include <QCoreApplication>
#include <QTimer>

namespace oomlab::ui {

void giveFreedMemoryBackSoon() {
    QTimer::singleShot(0, QCoreApplication::instance(), [] { malloc_trim(0); });
}

}  // namespace oomlab::ui
