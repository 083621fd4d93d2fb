// The out-of-memory message of any PyTorch program, pasted or read from the end of a log,
// explained as `oomlab-cli explain` explains it: the verdict, the message's figures with what
// they mean, and what to try first.
#pragma once

#include <QTimer>
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTextBrowser;

namespace oomlab::ui {

class OomMessageWindow : public QWidget {
    Q_OBJECT

public:
    explicit OomMessageWindow(QWidget* parent = nullptr);

    // The text to explain (a message, a traceback or a whole log), explained at once.
    void setMessage(const QString& text);
    // The last kLogTail bytes of the log at `path` as the text; false, and why in the view,
    // where it cannot be read.
    bool openLog(const QString& path);

    // The explanation as shown, in plain text; the verdict as `--json` names it ("" when the
    // text holds no message).
    QString explanationText() const;
    QString verdict() const { return m_verdict; }
    QPlainTextEdit* messageEdit() const { return m_message; }

    // A log's end holds its last message; a message runs at most 64 KiB.
    static constexpr qint64 kLogTail = 1 << 20;

signals:
    void explained();

private:
    void explainNow();
    void openLogDialog();
    // What could not be read or explained, in the warning colour, where the explanation goes.
    void showProblem(const QString& problem);

    QPlainTextEdit* m_message = nullptr;
    QLabel* m_source = nullptr;
    QTextBrowser* m_view = nullptr;
    QTimer m_pause;  // a pasted or typed text is explained once it rests
    QString m_verdict;
};

}  // namespace oomlab::ui
