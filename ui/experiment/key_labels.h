// The names people read for the config keys ("Memory cap (MiB)" for memory.cap_mb). The
// dotted key stays in the tooltip, as it is what files and --set use.
#pragma once

#include <QString>

namespace oomlab::ui {

// A key's label; a key without one (added to the registry later) gets one from its name.
QString keyLabel(const QString& key);
bool hasOwnLabel(const QString& key);  // false: the label is made from the key's name

}  // namespace oomlab::ui
