// What to try after an out-of-memory or a failure, derived from the run's settings: each
// suggestion names a config key and a value the panel can apply with one click.
#pragma once

#include <QString>
#include <QVector>

#include "common/run_types.h"

namespace oomlab::ui {

struct Suggestion {
    QString text;   // one sentence: what and why
    QString key;    // config key to change; empty for advice without a setting
    QString value;  // the new value
};

// What happened, in a sentence or two (status, step, phase, the engine's message).
QString describeRunEnd(const RunEnd& end);

// Ordered: the most effective change for this config first.
QVector<Suggestion> suggestFixes(const RunEnd& end);

}  // namespace oomlab::ui
