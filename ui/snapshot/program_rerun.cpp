#include "snapshot/program_rerun.h"

#include <algorithm>

#include <QEvent>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QVBoxLayout>

#include "common/cli_program.h"
#include "common/formatting.h"
#include "oomlab/snapshot_reader/recorded_program.h"

namespace oomlab::ui {

ProgramRerun::ProgramRerun(QWidget* parent) : QWidget(parent) {
    m_button = new QPushButton(tr("Run it"));
    m_button->setObjectName(QStringLiteral("snapshotRunIt"));
    m_button->hide();
    // The table is wider than the window: its lines stay whole and scroll sideways (a label of
    // preformatted text widened the window past the screen and hid Run it).
    m_result = new QPlainTextEdit;
    m_result->setObjectName(QStringLiteral("snapshotRunItResult"));
    m_result->setReadOnly(true);
    m_result->setLineWrapMode(QPlainTextEdit::NoWrap);
    // The family only: its size follows the application's (zoom, presentation mode).
    QFont mono;
    mono.setFamily(QFontDatabase::systemFont(QFontDatabase::FixedFont).family());
    mono.setStyleHint(QFont::Monospace);
    m_result->setFont(mono);
    m_result->hide();
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
    setResult(QString());
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
        setResult(tr("Stopped."));
        return;
    }
    if (settings.trimmed().isEmpty()) {
        setResult(
            tr("Type the allocator settings to run it with, e.g. "
               "expandable_segments:True."));
        return;
    }
    m_settings = settings.trimmed();
    setResult(tr("Running the program with %1… (Stop ends it)").arg(m_settings));
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
    return m_result->toPlainText();
}

void ProgramRerun::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        setResult(m_result->toPlainText());  // as tall as its lines at the new size
    }
}

void ProgramRerun::setResult(const QString& text) {
    m_result->setPlainText(text);
    m_result->setVisible(!text.isEmpty());
    // As tall as its lines, up to 14, with room for the sideways scroll bar.
    const int lines = std::min<int>(int(text.count(QLatin1Char('\n'))) + 1, 14);
    m_result->setFixedHeight(lines * m_result->fontMetrics().lineSpacing() +
                             2 * m_result->frameWidth() +
                             int(m_result->document()->documentMargin()) * 2 +
                             m_result->horizontalScrollBar()->sizeHint().height());
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
    setResult(text);
    emit finished();
}

}  // namespace oomlab::ui
