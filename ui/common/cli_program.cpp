#include "common/cli_program.h"

#include <QCoreApplication>

namespace oomlab::ui {

QString cliProgram() {
    const QString cli = qEnvironmentVariable("OOMLAB_CLI");
    return cli.isEmpty() ? QCoreApplication::applicationDirPath() + QStringLiteral("/oomlab-cli")
                         : cli;
}

}  // namespace oomlab::ui
