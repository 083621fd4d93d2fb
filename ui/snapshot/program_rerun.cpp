#include "snapshot/program_rerun.h"

#include <QPushButton>
#include <QVBoxLayout>

#include "common/cli_program.h"
#include "common/formatting.h"
#include "common/wrapped_label.h"
#include "oomlab/snapshot_reader/recorded_program.h"

namespace oomlab::ui {

ProgramRerun::ProgramRerun(QWidget* parent) : QWidget(parent) {
    m_button = new QPushButton(tr("Run it"));
    m_button->setObjectName(QStringLiteral("snapshotRunIt"));
    m_button->hide();
    m_result = new WrappedLabel;
    m_result->setObjectName(QStringLiteral("snapshotRunItResult"));
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_result);
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    connect(&m_process, &QProcess::finished, this, [this] { showEnd(false); });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {  // no finished() follows
            showEnd(true);
        }
    });
}

ProgramRerun::~ProgramRerun() {
    stop();
}

void ProgramRerun::setRecord(const QString& path) {
    stop();
    m_record = path;
    m_result->clear();
    m_button->setText(tr("Run it"));
    m_button->setEnabled(true);
    try {
        const std::optional<RecordedProgram> program = read_recorded_program(ss(path));
        m_button->setVisible(program.has_value());
        if (program) {
            m_button->setToolTip(
                tr("Run %1 again in %2 with these allocator settings (PYTORCH_CUDA_ALLOC_CONF; "
                   "nothing else in it is changed), its memory recorded, and set what it "
                   "reached beside the recorded run and the replay's prediction")
                    .arg(qs(program->command.front()), qs(program->directory)));
        }
    } catch (const std::exception& error) {
        m_button->setVisible(true);
        m_button->setEnabled(false);
        m_button->setToolTip(qs(error.what()));
    }
}

void ProgramRerun::run(const QString& settings) {
    if (m_process.state() != QProcess::NotRunning) {
        stop();
        m_result->setText(tr("Stopped."));
        return;
    }
    if (settings.trimmed().isEmpty()) {
        m_result->setText(
            tr("Type the allocator settings to run it with, e.g. "
               "expandable_segments:True."));
        return;
    }
    m_settings = settings.trimmed();
    m_result->setText(tr("Running the program with %1… (Stop ends it)").arg(m_settings));
    m_button->setText(tr("Stop"));
    m_process.start(cliProgram(), {QStringLiteral("record"), QStringLiteral("--after"), m_record,
                                   QStringLiteral("--try"), m_settings});
}

void ProgramRerun::stop() {
    if (m_process.state() == QProcess::NotRunning) {
        return;
    }
    m_stopping = true;
    m_process.terminate();  // oomlab-cli stops the program and what it started
    if (!m_process.waitForFinished(5000)) {
        m_process.kill();
        m_process.waitForFinished(1000);
    }
    m_stopping = false;
    m_button->setText(tr("Run it"));
}

QString ProgramRerun::resultText() const {
    return m_result->text();
}

// The table oomlab-cli printed (the recorded run and this one side by side), or why it failed.
void ProgramRerun::showEnd(bool failedToStart) {
    if (m_stopping) {
        return;  // stop() says so
    }
    m_button->setText(tr("Run it"));
    const QString out = QString::fromUtf8(m_process.readAll());
    QString text;
    if (failedToStart) {
        text = tr("%1 could not be started: %2").arg(cliProgram(), m_process.errorString());
    } else {
        const qsizetype table = out.indexOf(QStringLiteral("The program run again"));
        text = table >= 0 ? out.mid(table) : out.trimmed();
    }
    m_result->setText(QStringLiteral("<pre>") + text.toHtmlEscaped() + QStringLiteral("</pre>"));
    emit finished();
}

}  // namespace oomlab::ui
