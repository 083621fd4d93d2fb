// What a run that tried a fix measured against what the fix predicted, in words, for the
// places a run is shown (its details, the live page when it ends).
#pragma once

#include <QString>

#include "oomlab/store/run_store.h"

namespace oomlab::ui {

// "Tries a fix offered to run 3: predicted 14.9 MiB → measured 14.4 MiB, accuracy 45.5%"; empty
// when `tried` tries no fix. A fixed run since deleted, or fixes it cannot read, are said so.
QString fixOutcomeText(const RunStore& store, const RunRecord& tried);

}  // namespace oomlab::ui
