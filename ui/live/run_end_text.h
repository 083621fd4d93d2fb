// What happened at the end of a run, in a sentence or two (status, step, phase, the engine's
// message, what was resident), for the failure panel and the live page.
#pragma once

#include <QString>

#include "common/run_types.h"

namespace oomlab::ui {

QString describeRunEnd(const RunEnd& end);

}  // namespace oomlab::ui
