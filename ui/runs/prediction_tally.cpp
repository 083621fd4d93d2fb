#include "runs/prediction_tally.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>

namespace oomlab::ui {
namespace {

constexpr int kLongestBar = 24;  // blocks, for the answer given most

QString tr(const char* text) {
    return QCoreApplication::translate("PredictionTally", text);
}

QString html(const std::string& text) {
    return QString::fromStdString(text).toHtmlEscaped();
}

// One row an answer: its bar (`most` the longest's count), its count, its words.
QString countsTable(const std::vector<std::pair<std::string, std::size_t>>& counts,
                    const QString& barColor, std::size_t most) {
    QString rows;
    for (const auto& [answer, count] : counts) {
        const int blocks = std::max(1, int(count * kLongestBar / std::max<std::size_t>(most, 1)));
        rows += QStringLiteral(
                    "<tr><td style='color:%1'>%2</td><td align='right'>&nbsp;<b>%3</b>&nbsp;</td>"
                    "<td>%4</td></tr>")
                    .arg(barColor, QString(blocks, QChar(0x2588)))
                    .arg(count)
                    .arg(html(answer));
    }
    return QStringLiteral("<table cellspacing='2'>%1</table>").arg(rows);
}

std::size_t total(const std::vector<std::pair<std::string, std::size_t>>& counts) {
    std::size_t sum = 0;
    for (const auto& entry : counts) {
        sum += entry.second;
    }
    return sum;
}

}  // namespace

QString predictionTallyHtml(const std::vector<LessonTally>& tallies, const QString& barColor) {
    if (tallies.empty()) {
        return tr(
            "No prediction has reached the server yet: a student's prediction is sent with "
            "the runs of a lesson they run (Lessons menu, or oomlab-cli lesson run "
            "--predict).");
    }
    QString text;
    for (const LessonTally& tally : tallies) {
        const auto predicted = tally.predicted_counts();
        const auto measured = tally.measured_counts();
        // One scale for both tables, so that their bars compare.
        const std::size_t scale = std::max(predicted.empty() ? 0 : predicted.front().second,
                                           measured.empty() ? 0 : measured.front().second);
        text += tr("<h3>%1: %2 students predicted</h3>")
                    .arg(html(tally.lesson))
                    .arg(tally.students.size());
        text += countsTable(predicted, barColor, scale);
        const std::size_t ended = total(measured);
        text += tr("<p><b>Measured</b>, by the runs of %1 of them:</p>").arg(ended);
        text += measured.empty() ? tr("<p>(no student's lesson has ended yet)</p>")
                                 : countsTable(measured, barColor, scale);
        const auto disagreeing = tally.disagreeing();
        if (disagreeing.empty()) {
            text +=
                ended ? tr("<p>Every student's runs measured what they predicted.</p>") : QString();
            continue;
        }
        QStringList students;
        for (const StudentPrediction* student : disagreeing) {
            students << tr("<b>%1</b> predicted %2; their runs: %3")
                            .arg(html(student->student),
                                 html(answer_text(tally.asks, student->predicted)),
                                 html(answer_text(tally.asks, *student->measured)));
        }
        text += tr("<p>%1 of %2 students' runs disagree with their prediction:</p><ul><li>%3"
                   "</li></ul>")
                    .arg(disagreeing.size())
                    .arg(ended)
                    .arg(students.join(QStringLiteral("</li><li>")));
    }
    return text;
}

QString predictionsWaiting(const std::vector<LessonTally>& tallies) {
    QStringList lessons;
    for (const LessonTally& tally : tallies) {
        lessons << tr("%1 students predicted for %2")
                       .arg(tally.students.size())
                       .arg(QString::fromStdString(tally.lesson));
    }
    return lessons.join(QStringLiteral("; "));
}

}  // namespace oomlab::ui
