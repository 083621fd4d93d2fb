// A lesson as a class goes through it: the explanation; a prediction (which run needs the most
// memory, and by how much?) made before anything runs; the runs, paced so the curves can be
// watched; then each claim revealed in large type, checked against what was measured, beside
// the prediction. The window's experiment is never touched: the lesson's runs have their own
// settings.
#pragma once

#include <QDialog>

#include "common/run_types.h"
#include "live/run_controller.h"
#include "oomlab/lessons/lesson.h"

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
    // The prediction: the index of the run expected to need the most memory (kAboutTheSame,
    // or kNotChosen), and the expected ratio band (0: under 1.5x, 1: 1.5x to 3x, 2: over 3x;
    // -1: not chosen). Nothing is chosen until the user chooses, and the ratio is asked only
    // where every run is meant to finish: a run out of memory measures its cap, not its need.
    static constexpr int kAboutTheSame = -1;
    static constexpr int kNotChosen = -2;
    int predictedRun() const;
    int predictedBand() const;
    bool asksHowMuch() const { return m_asksHowMuch; }
    void predict(int run, int band);  // as if chosen with the mouse

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
    void updatePredictionComplete();
    void showRevealed();

    Lesson m_lesson;
    LessonEnd m_end;
    QStackedWidget* m_pages = nullptr;
    QButtonGroup* m_runChoice = nullptr;
    QComboBox* m_band = nullptr;
    QPushButton* m_toRun = nullptr;  // on once the prediction is complete
    bool m_asksHowMuch = true;
    QComboBox* m_pace = nullptr;
    QPushButton* m_start = nullptr;
    QLabel* m_progress = nullptr;
    QLabel* m_reveal = nullptr;
    QPushButton* m_revealNext = nullptr;
    int m_runsStarted = 0;
    int m_revealed = 0;
};

}  // namespace oomlab::ui
