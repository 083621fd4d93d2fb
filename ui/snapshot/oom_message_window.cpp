#include "snapshot/oom_message_window.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "common/formatting.h"
#include "oomlab/advice/oom_message.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

QString listed(const std::vector<std::string>& items, const char* tag) {
    QString html = QStringLiteral("<%1>").arg(QLatin1String(tag));
    for (const std::string& item : items) {
        html += QStringLiteral("<li>%1</li>").arg(qs(item).toHtmlEscaped());
    }
    return html + QStringLiteral("</%1>").arg(QLatin1String(tag));
}

}  // namespace

OomMessageWindow::OomMessageWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
    setObjectName(QStringLiteral("oomMessageWindow"));
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(tr("Explain an out-of-memory message"));
    m_message = new QPlainTextEdit;
    m_message->setObjectName(QStringLiteral("oomMessageEdit"));
    m_message->setPlaceholderText(
        tr("Paste the out-of-memory message of any PyTorch program here: the error's line, its "
           "traceback, or a whole log (its last message is explained)."));
    m_message->setLineWrapMode(QPlainTextEdit::NoWrap);
    auto* open = new QPushButton(tr("Open a log…"));
    open->setObjectName(QStringLiteral("oomMessageOpenLog"));
    m_source = new QLabel;
    m_source->setObjectName(QStringLiteral("oomMessageSource"));
    m_view = new QTextBrowser;
    m_view->setObjectName(QStringLiteral("oomMessageExplanation"));
    auto* top = new QHBoxLayout;
    top->addWidget(m_source, 1);
    top->addWidget(open);
    auto* above = new QWidget;
    auto* aboveLayout = new QVBoxLayout(above);
    aboveLayout->setContentsMargins(0, 0, 0, 0);
    aboveLayout->addLayout(top);
    aboveLayout->addWidget(m_message, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(above);
    split->addWidget(m_view);
    split->setSizes({1000, 1400});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
    resize(900, 650);
    m_pause.setSingleShot(true);
    m_pause.setInterval(250);
    connect(&m_pause, &QTimer::timeout, this, &OomMessageWindow::explainNow);
    connect(m_message, &QPlainTextEdit::textChanged, this, [this] {
        m_source->clear();  // the text is no longer only the log's that openLog names
        m_pause.start();
    });
    connect(open, &QPushButton::clicked, this, &OomMessageWindow::openLogDialog);
    explainNow();
}

void OomMessageWindow::setMessage(const QString& text) {
    m_message->setPlainText(text);
    m_pause.stop();
    explainNow();
}

bool OomMessageWindow::openLog(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        showProblem(tr("Cannot read %1: %2").arg(path, file.errorString()));
        return false;
    }
    const qint64 size = file.size();
    if (size > kLogTail) {
        file.seek(size - kLogTail);
    }
    const QString name = QFileInfo(path).fileName();
    setMessage(QString::fromUtf8(file.read(kLogTail)));
    m_source->setText(size > kLogTail ? tr("the last %1 of %2 (%3 in all)")
                                            .arg(formatBytes(kLogTail), name, formatBytes(size))
                                      : name);
    return true;
}

void OomMessageWindow::openLogDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a log that ends with an out-of-memory error"), QString(),
        tr("Logs and text (*.log *.txt *.out *.err);;All files (*)"));
    if (!path.isEmpty()) {
        openLog(path);
    }
}

void OomMessageWindow::explainNow() {
    const std::string text = ss(m_message->toPlainText());
    m_verdict.clear();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        m_view->setHtml(
            tr("<p>The verdict, the message's figures with what they mean, and what "
               "to try first appear here: <tt>oomlab-cli explain</tt> gives the "
               "same.</p>"));
        emit explained();
        return;
    }
    try {
        const OomExplanation e = explain_oom_message(text);
        m_verdict = QString::fromLatin1(oom_verdict_name(e.verdict));
        m_view->setHtml(QStringLiteral("<p><b>%1</b></p>%2<p>%3</p>%4<p><small>%5</small></p>")
                            .arg(qs(e.summary).toHtmlEscaped(), listed(e.facts, "ul"),
                                 tr("Try, in this order:"), listed(e.tries, "ol"),
                                 tr("verdict: %1").arg(m_verdict)));
    } catch (const std::exception& error) {
        showProblem(qs(error.what()));
    }
    emit explained();
}

void OomMessageWindow::showProblem(const QString& problem) {
    m_view->setHtml(QStringLiteral("<p style='color:%1'>%2</p>")
                        .arg(warningColor().name(), problem.toHtmlEscaped()));
}

QString OomMessageWindow::explanationText() const {
    return m_view->toPlainText();
}

}  // namespace oomlab::ui
