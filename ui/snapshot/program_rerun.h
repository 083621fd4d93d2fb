// "Run it" beside the snapshot window's replay: the program a record came from (oomlab-cli
// record keeps its command, folder and ending beside the record) run again with the allocator
// settings typed in, by `oomlab-cli record --after RECORD --try SETTINGS`, and what that run
// reached set beside what the recorded run reached and what the replay predicted. Nothing else
// in the program is changed.
#pragma once

#include <QProcess>
#include <QString>
#include <QWidget>

class QPlainTextEdit;
class QPushButton;

namespace oomlab::ui {

class ProgramRerun : public QWidget {
    Q_OBJECT

public:
    explicit ProgramRerun(QWidget* parent = nullptr);
    ~ProgramRerun() override;

    // The record shown; Run it is offered when its program is known.
    void setRecord(const QString& path);
    // Runs the program with `settings` (PYTORCH_CUDA_ALLOC_CONF); while it runs, stops it.
    void run(const QString& settings);

    QPushButton* button() const { return m_button; }
    QString resultText() const;

signals:
    void finished();

protected:
    void changeEvent(QEvent* event) override;

private:
    void showEnd(bool failedToStart);
    void stop();
    // What the result shows: a table as oomlab-cli printed it, lines kept whole (scrolled
    // sideways, never widening the window), or a line of words.
    void setResult(const QString& text);

    QString m_record;
    QPushButton* m_button = nullptr;
    QPlainTextEdit* m_result = nullptr;
    QProcess m_process;
    QString m_settings;
    bool m_stopping = false;
};

}  // namespace oomlab::ui
