#include "lessons/lesson_flow.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "lessons/lesson_text.h"

namespace oomlab::ui {
namespace {

// The reveal is read from the back of a room: a large, bold font.
QFont largeFont(const QFont& base) {
    QFont font = base;
    font.setPointSizeF(base.pointSizeF() * 1.6);
    return font;
}

QLabel* wrappedLabel(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    return label;
}

QString boldList(const QStringList& labels) {
    QStringList bold;
    for (const QString& label : labels) {
        bold << QStringLiteral("<b>%1</b>").arg(label.toHtmlEscaped());
    }
    return bold.join(QStringLiteral(", "));
}

QString verdictWord(bool right) {
    return right ? LessonFlow::tr("<span style='color:#2e9d5b'>right</span>")
                 : LessonFlow::tr("<span style='color:#d62728'>off</span>");
}

}  // namespace

LessonFlow::LessonFlow(const Lesson& lesson, QWidget* parent)
    : QDialog(parent), m_lesson(lesson), m_asks(lesson_asks(lesson)) {
    setObjectName(QStringLiteral("lessonFlow"));
    setWindowTitle(tr("Lesson: %1").arg(qs(lesson.title)));
    resize(680, 520);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(explainPage());
    m_pages->addWidget(predictPage());
    m_pages->addWidget(runPage());
    m_pages->addWidget(revealPage());
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_pages);
}

int LessonFlow::page() const {
    return m_pages->currentIndex();
}

void LessonFlow::next() {
    m_pages->setCurrentIndex(std::min(m_pages->currentIndex() + 1, int(RevealPage)));
}

QWidget* LessonFlow::explainPage() {
    auto* page = new QWidget(this);
    auto* text = new QTextBrowser(page);
    text->setHtml(lessonSetupHtml(m_lesson));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, page);
    QPushButton* onward = buttons->addButton(tr("Next: predict ›"), QDialogButtonBox::AcceptRole);
    onward->setDefault(true);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(onward, &QPushButton::clicked, this, &LessonFlow::next);
    auto* layout = new QVBoxLayout(page);
    layout->addWidget(text, 1);
    layout->addWidget(buttons);
    return page;
}

QWidget* LessonFlow::predictPage() {
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    const bool mostMemory = m_asks.question == Question::MostMemory;
    layout->addWidget(wrappedLabel(
        mostMemory ? tr("<h3>Before it runs: predict</h3>Which run will need the most memory at "
                        "its peak?")
                   : tr("<h3>Before it runs: predict</h3>Each run has the same memory cap. "
                        "Which will complete its training?"),
        page));
    m_runChoice = new QButtonGroup(page);
    const auto addChoice = [&](const QString& text, int run) {
        auto* choice = new QRadioButton(text, page);
        m_runChoice->addButton(choice, choiceId(run));
        layout->addWidget(choice);
    };
    for (std::size_t i = 0; i < m_lesson.runs.size(); ++i) {
        const QString label = qs(m_lesson.runs[i].label);
        addChoice(mostMemory ? label : tr("only %1").arg(label), static_cast<int>(i));
    }
    if (mostMemory) {
        addChoice(tr("they will need about the same"), kAboutTheSame);
    } else {
        addChoice(tr("every run"), kEveryRun);
        addChoice(tr("none of them"), kNoRun);
    }
    QLabel* second = wrappedLabel(
        mostMemory ? tr("By how much, against the run that needs the least?")
                   : tr("When a run runs out of memory, the memory the allocator holds free "
                        "will be:"),
        page);
    layout->addWidget(second);
    m_band = new QComboBox(page);
    m_band->setObjectName(mostMemory ? QStringLiteral("predictedBand")
                                     : QStringLiteral("predictedFreeMemory"));
    if (mostMemory) {
        m_band->addItems(
            {tr("less than 1.5 times"), tr("1.5 to 3 times"), tr("more than 3 times")});
    } else {
        m_band->addItems({tr("less than it asked for: the memory is full"),
                          tr("more than it asked for, in pieces too small")});
    }
    m_band->setPlaceholderText(tr("choose…"));
    m_band->setCurrentIndex(-1);
    layout->addWidget(m_band);
    const bool asksSecond = mostMemory || m_asks.free_memory;
    second->setVisible(asksSecond);
    m_band->setVisible(asksSecond);
    layout->addStretch(1);
    auto* buttons = new QHBoxLayout;
    auto* back = new QPushButton(tr("‹ Back"), page);
    m_toRun = new QPushButton(tr("Next: run ›"), page);
    m_toRun->setObjectName(QStringLiteral("toRun"));
    m_toRun->setDefault(true);
    connect(back, &QPushButton::clicked, this, [this] { m_pages->setCurrentIndex(ExplainPage); });
    connect(m_toRun, &QPushButton::clicked, this, &LessonFlow::next);
    connect(m_runChoice, &QButtonGroup::idClicked, this, &LessonFlow::updatePredictionComplete);
    connect(m_band, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &LessonFlow::updatePredictionComplete);
    buttons->addWidget(back);
    buttons->addStretch(1);
    buttons->addWidget(m_toRun);
    layout->addLayout(buttons);
    updatePredictionComplete();
    return page;
}

QWidget* LessonFlow::runPage() {
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    layout->addWidget(wrappedLabel(
        plural(static_cast<std::int64_t>(m_lesson.runs.size()),
               tr("<h3>Run the lesson</h3>Its run trains in the Live tab; your "
                  "experiment in the panel stays as it is. This window steps aside while it "
                  "trains, so the curves can be watched, and comes back when it ends. Memory is "
                  "the same at any pace."),
               tr("<h3>Run the lesson</h3>Its %n runs train one after another in the Live tab; "
                  "your experiment in the panel stays as it is. This window steps aside while "
                  "they train, so the curves can be watched, and comes back when they end. "
                  "Memory is the same at any pace.")),
        page));
    auto* paceRow = new QHBoxLayout;
    paceRow->addWidget(new QLabel(tr("Pace:"), page));
    m_pace = new QComboBox(page);
    m_pace->setObjectName(QStringLiteral("lessonPace"));
    m_pace->addItem(tr("full speed"), int(RunController::Pace::Full));
    m_pace->addItem(tr("watchable (about 40 steps a second)"), int(RunController::Pace::Watchable));
    m_pace->addItem(tr("slow (about 8 steps a second)"), int(RunController::Pace::Slow));
    // The pace chosen for the last lesson, else watchable.
    const int kept = m_pace->findData(
        AppSettings::value(QStringLiteral("lesson/pace"), int(RunController::Pace::Watchable)));
    m_pace->setCurrentIndex(kept >= 0 ? kept : 1);
    paceRow->addWidget(m_pace, 1);
    layout->addLayout(paceRow);
    m_progress = wrappedLabel(QString(), page);
    m_progress->setFont(largeFont(font()));
    layout->addWidget(m_progress);
    layout->addStretch(1);
    m_start = new QPushButton(tr("Run the lesson"), page);
    m_start->setObjectName(QStringLiteral("runLesson"));
    m_start->setDefault(true);
    connect(m_start, &QPushButton::clicked, this, [this] {
        m_start->setEnabled(false);
        m_runsStarted = 0;
        m_progress->setText(tr("Starting…"));
        AppSettings::setValue(QStringLiteral("lesson/pace"), m_pace->currentData());
        // Out of the way while it trains: the plots behind it are what the room watches.
        hide();
        emit runRequested(static_cast<RunController::Pace>(m_pace->currentData().toInt()));
    });
    layout->addWidget(m_start, 0, Qt::AlignRight);
    return page;
}

QWidget* LessonFlow::revealPage() {
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    m_reveal = wrappedLabel(QString(), page);
    m_reveal->setObjectName(QStringLiteral("lessonReveal"));
    m_reveal->setFont(largeFont(font()));
    m_reveal->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    // Six claims and the why in large type outgrow a projector's screen: they scroll inside
    // the window (the wheel too), which keeps its size and its Close button.
    auto* scroll = new QScrollArea(page);
    scroll->setObjectName(QStringLiteral("lessonRevealScroll"));
    scroll->setWidget(m_reveal);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(scroll, 1);
    auto* buttons = new QHBoxLayout;
    m_revealNext = new QPushButton(tr("Reveal the next claim"), page);
    m_revealNext->setDefault(true);
    auto* close = new QPushButton(tr("Close"), page);
    connect(m_revealNext, &QPushButton::clicked, this, [this] { revealNext(); });
    connect(close, &QPushButton::clicked, this, &QDialog::accept);
    buttons->addStretch(1);
    buttons->addWidget(m_revealNext);
    buttons->addWidget(close);
    layout->addLayout(buttons);
    return page;
}

// Runs take the ids 0..n-1, the other answers the ids after them.
int LessonFlow::choiceId(int run) const {
    const int runs = static_cast<int>(m_lesson.runs.size());
    return run >= 0 ? run : runs - run - 1;  // kAboutTheSame: n, kEveryRun: n + 2, kNoRun: n + 3
}

int LessonFlow::predictedRun() const {
    const int id = m_runChoice->checkedId();
    const int runs = static_cast<int>(m_lesson.runs.size());
    return id < 0 ? kNotChosen : id < runs ? id : runs - id - 1;
}

void LessonFlow::updatePredictionComplete() {
    const bool asksSecond = asksHowMuch() || m_asks.free_memory;
    m_toRun->setEnabled(predictedRun() != kNotChosen && (!asksSecond || predictedBand() >= 0));
}

int LessonFlow::predictedBand() const {
    return m_band->currentIndex();
}

void LessonFlow::predict(int run, int band) {
    if (QAbstractButton* button = m_runChoice->button(choiceId(run))) {
        button->setChecked(true);
    }
    m_band->setCurrentIndex(band);
    updatePredictionComplete();
}

void LessonFlow::onRunCreated() {
    const auto index = static_cast<std::size_t>(m_runsStarted++);
    if (index < m_lesson.runs.size()) {
        m_progress->setText(tr("Training run %1 of %2: <b>%3</b>")
                                .arg(index + 1)
                                .arg(m_lesson.runs.size())
                                .arg(qs(m_lesson.runs[index].label).toHtmlEscaped()));
    }
}

void LessonFlow::onLessonFinished(const LessonEnd& end) {
    m_end = end;
    m_revealed = 0;
    m_start->setEnabled(true);
    m_pages->setCurrentIndex(RevealPage);
    show();
    raise();
    showRevealed();
}

QString LessonFlow::predictionVerdict() const {
    if (m_end.peaks.size() != int(m_asks.labels.size())) {  // stopped before its last run
        return tr("The lesson stopped before its runs could be compared: %1")
            .arg(m_end.error.toHtmlEscaped());
    }
    return m_asks.question == Question::MostMemory ? mostMemoryVerdict() : whichCompletesVerdict();
}

LessonAnswer LessonFlow::measured(double* ratio) const {
    std::vector<LessonRunFacts> runs;
    for (int i = 0; i < m_end.peaks.size(); ++i) {
        runs.push_back({m_end.peaks[i], m_end.statuses.value(i, RunStatus::Failed),
                        m_end.fragmented.value(i)});
    }
    return measured_answer(m_asks, runs, ratio);
}

QString LessonFlow::mostMemoryVerdict() const {
    double ratio = 0;
    const LessonAnswer answer = measured(&ratio);
    const qint64 most = *std::max_element(m_end.peaks.begin(), m_end.peaks.end());
    const QString measuredText =
        answer.run < 0
            ? tr("the runs needed about the same (%1× at most)").arg(ratio, 0, 'f', 2)
            : tr("<b>%1</b> needed the most, %2 at its peak: %3× the least")
                  .arg(m_end.runLabels.value(answer.run).toHtmlEscaped(), formatBytes(most))
                  .arg(ratio, 0, 'f', 2);
    const bool runRight = predictedRun() == answer.run;
    const bool bandRight = predictedBand() == answer.second;
    return tr("Measured: %1.<br>Your prediction was %2.")
        .arg(measuredText, runRight && !bandRight ? tr("right about which run, off about how much")
                                                  : verdictWord(runRight && bandRight));
}

QString LessonFlow::whichCompletesVerdict() const {
    QStringList completed;
    QStringList failed;  // "default allocator (out of memory at step 4)"
    for (int i = 0; i < m_end.runLabels.size(); ++i) {
        const RunStatus status = m_end.statuses.value(i, RunStatus::Failed);
        if (status == RunStatus::Completed) {
            completed << m_end.runLabels[i];
            continue;
        }
        failed << tr("%1 (%2 at step %3)")
                      .arg(m_end.runLabels[i],
                           status == RunStatus::Oom ? tr("out of memory") : statusName(status))
                      .arg(m_end.steps.value(i) + 1);
    }
    const LessonAnswer answer = measured();
    QString measuredText =
        completed.isEmpty() ? tr("no run completed") : tr("%1 completed").arg(boldList(completed));
    if (!failed.isEmpty()) {
        measuredText += tr("; %1 did not").arg(boldList(failed));
    }
    const bool runRight = predictedRun() == answer.run;
    if (answer.second < 0) {
        return tr("Measured: %1.<br>Your prediction was %2.")
            .arg(measuredText, verdictWord(runRight));
    }
    const bool fragmented = answer.second == 1;
    measuredText += fragmented
                        ? tr(", with more memory free than it asked for, in pieces too small")
                        : tr(", with less memory free than it asked for");
    const bool whyRight = predictedBand() == answer.second;
    return tr("Measured: %1.<br>Your prediction was %2.")
        .arg(measuredText, runRight && !whyRight   ? tr("right about which run, off about why")
                           : !runRight && whyRight ? tr("off about which run, right about why")
                                                   : verdictWord(runRight && whyRight));
}

bool LessonFlow::revealNext() {
    if (m_revealed >= m_end.checks.size()) {
        return false;
    }
    ++m_revealed;
    showRevealed();
    return true;
}

QString LessonFlow::revealText() const {
    return m_reveal->text();
}

void LessonFlow::showRevealed() {
    QString html = predictionVerdict();
    for (int i = 0; i < m_revealed; ++i) {
        html += QStringLiteral("<br><br><span style='color:%1'>%2</span> %3")
                    .arg(m_end.holds[i] ? QStringLiteral("#2e9d5b") : QStringLiteral("#d62728"),
                         m_end.holds[i] ? QStringLiteral("✓") : QStringLiteral("✗"),
                         m_end.checks[i].toHtmlEscaped());
    }
    const bool all = m_revealed >= m_end.checks.size();
    if (all) {
        html += lessonExplanationHtml(m_lesson);  // the why, once every claim is out
    }
    m_reveal->setText(html);
    m_revealNext->setEnabled(!all);
    if (all) {
        emit revealedAll();
    }
}

}  // namespace oomlab::ui
