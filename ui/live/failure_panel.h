// Shown above the live plots when a run ends out of memory or fails: what happened (step,
// phase, what was resident) and what to try, each fix one click away.
#pragma once

#include <QFrame>

#include "common/run_types.h"

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace oomlab::ui {

class FailurePanel : public QFrame {
    Q_OBJECT

public:
    explicit FailurePanel(QWidget* parent = nullptr);

    // Shows the panel for OOM and failures; hides it otherwise.
    void showRunEnd(const RunEnd& end);
    QString headline() const;
    QString details() const;
    int suggestionCount() const { return m_suggestionCount; }

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

signals:
    // A fix's settings, to apply to the experiment panel (and run at once when `run`).
    void applyFix(const oomlab::Settings& settings, bool run);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    QWidget* fixRow(const OomFix& fix);
    // The height of all of it with its text wrapped at `width`.
    int textHeight(int width) const;
    void fitHeightToText();

    QLabel* m_title = nullptr;
    QScrollArea* m_scroll = nullptr;
    QLabel* m_details = nullptr;
    QWidget* m_fixes = nullptr;
    QVBoxLayout* m_fixesLayout = nullptr;
    int m_suggestionCount = 0;
};

}  // namespace oomlab::ui
