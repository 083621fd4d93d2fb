// A lesson as a class goes through it: the explanation; a prediction (which run needs the most
// memory, and by how much? or which runs complete, and why?) made before anything runs; the runs,
// paced so the curves can be watched; then each claim revealed in large type, checked against what
// was measured, beside the prediction. The window's experiment is never touched: the lesson's runs
// have their own settings.
#pragma once

#include <QDialog>

#include "common/run_types.h"
#include "live/run_controller.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/lessons/lesson_prediction.h"

class QButtonGroup;
class QComboBox;
class QLabel;
class QPushButton;
class QStackedWidget;

namespace oomlab::ui {

class LessonFlow : public QDialog {
    Q_OBJECT

public:
    enum Page { ExplainPage, PredictPage, RunPage, RevealPage };

    explicit LessonFlow(const Lesson& lesson, QWidget* parent = nullptr);

    const Lesson& lesson() const { return m_lesson; }
    int page() const;

    // What the prediction page asks. Where every run is meant to finish: which run needs the
    // most memory at its peak, and by how much against the least. Where a run is meant to run
    // out of memory, its peak is its cap and not its need: which runs complete, and, where a
    // claim is about fragmentation, how the allocator's free memory lies when one fails.
    using Question = LessonQuestion;
    Question question() const { return m_asks.question; }
    // The first answer: a run's index (the one needing the most; the only one completing),
    // kAboutTheSame (most memory), kEveryRun or kNoRun (which completes), or kNotChosen.
    static constexpr int kAboutTheSame = LessonAnswer::kAboutTheSame;
    static constexpr int kNotChosen = LessonAnswer::kNotChosen;
    static constexpr int kEveryRun = LessonAnswer::kEveryRun;
    static constexpr int kNoRun = LessonAnswer::kNoRun;
    int predictedRun() const;
    // The second answer, -1 until chosen: the ratio band (0: under 1.5x, 1: 1.5x to 3x,
    // 2: over 3x) or the free memory at the out-of-memory (0: less than the request asked
    // for, 1: more, in pieces too small).
    int predictedBand() const;
    bool asksHowMuch() const { return m_asks.question == Question::MostMemory; }
    bool asksFreeMemory() const { return m_asks.free_memory; }
    void predict(int run, int band);  // as if chosen with the mouse
    // Both answers, as the class's tracker gets them with each of the lesson's runs.
    LessonAnswer prediction() const { return {predictedRun(), predictedBand()}; }

    // What the window reports back while the lesson runs.
    void onRunCreated();  // the next of the lesson's runs began training
    void onLessonFinished(const LessonEnd& end);

    // Shows the next claim; false when all are shown.
    bool revealNext();
    int revealed() const { return m_revealed; }
    QString revealText() const;

public slots:
    void next();

signals:
    // "Run the lesson" was pressed: train its runs at this pace (kept for the next lesson).
    void runRequested(oomlab::ui::RunController::Pace pace);
    // Every claim is shown: the conclusions may appear elsewhere (the compare page) too.
    void revealedAll();

private:
    QWidget* explainPage();
    QWidget* predictPage();
    QWidget* runPage();
    QWidget* revealPage();
    QString predictionVerdict() const;
    // What the lesson's runs measured; `ratio`: the most's peak over the least's.
    LessonAnswer measured(double* ratio = nullptr) const;
    QString mostMemoryVerdict() const;
    QString whichCompletesVerdict() const;
    int choiceId(int run) const;  // the radio button's id of an answer
    void updatePredictionComplete();
    void showRevealed();

    Lesson m_lesson;
    LessonEnd m_end;
    QStackedWidget* m_pages = nullptr;
    QButtonGroup* m_runChoice = nullptr;
    QComboBox* m_band = nullptr;     // the second question
    QPushButton* m_toRun = nullptr;  // on once the prediction is complete
    LessonAsks m_asks;
    QComboBox* m_pace = nullptr;
    QPushButton* m_start = nullptr;
    QLabel* m_progress = nullptr;
    QLabel* m_reveal = nullptr;
    QPushButton* m_revealNext = nullptr;
    int m_runsStarted = 0;
    int m_revealed = 0;
};

}  // namespace oomlab::ui
