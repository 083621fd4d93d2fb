// The oomlab-cli the workbench starts (a run's worker processes, a recorded program run again):
// the one installed beside it, or $OOMLAB_CLI (one that is not installed beside it: the tests).
#pragma once

#include <QString>

namespace oomlab::ui {

QString cliProgram();

}  // namespace oomlab::ui
