#include "lessons/lesson_text.h"

#include <QObject>

#include "common/formatting.h"

namespace oomlab::ui {

LessonCatalog loadLessonCatalog() {
    LessonCatalog catalog;
    try {
        const std::string folder = lessons_folder();
        catalog.folder = qs(folder);
        std::vector<BrokenLesson> broken;
        catalog.lessons = load_lessons(folder, &broken);
        for (const BrokenLesson& lesson : broken) {
            catalog.broken << qs(lesson.why);
        }
    } catch (const std::exception& error) {
        catalog.error = qs(error.what());
    }
    return catalog;
}

QString settingsText(const Settings& settings) {
    QStringList parts;
    for (const auto& [key, value] : settings) {
        parts << QStringLiteral("%1=%2").arg(qs(key), qs(value));
    }
    return parts.join(QStringLiteral("  "));
}

namespace {

// The settings every run shares, then each run's own.
QString runsHtml(const Lesson& lesson) {
    QString html;
    if (!lesson.base.empty()) {
        html += QObject::tr("<p><b>Every run:</b> <code>%1</code></p>")
                    .arg(settingsText(lesson.base).toHtmlEscaped());
    }
    html += plural(static_cast<std::int64_t>(lesson.runs.size()),
                   QObject::tr("<p><b>The lesson trains %n run:</b></p><ol>"),
                   QObject::tr("<p><b>The lesson trains %n runs, one after another:</b></p><ol>"));
    for (const LessonRun& run : lesson.runs) {
        html += QStringLiteral("<li><b>%1</b> <code>%2</code></li>")
                    .arg(qs(run.label).toHtmlEscaped(), settingsText(run.settings).toHtmlEscaped());
    }
    return html + QStringLiteral("</ol>");
}

}  // namespace

QString lessonExplanationHtml(const Lesson& lesson) {
    QString html;
    for (const QString& paragraph : qs(lesson.explanation).split(QStringLiteral("\n\n"))) {
        html += QStringLiteral("<p>%1</p>").arg(paragraph.toHtmlEscaped());
    }
    return html;
}

QString lessonSetupHtml(const Lesson& lesson) {
    return QStringLiteral("<h3>%1</h3>").arg(qs(lesson.title).toHtmlEscaped()) + runsHtml(lesson) +
           QObject::tr(
               "<p>Predict what they will show; the explanation and the checked claims "
               "come after the runs.</p>");
}

QString lessonHtml(const Lesson& lesson) {
    QString html = QStringLiteral("<h3>%1</h3>").arg(qs(lesson.title).toHtmlEscaped()) +
                   lessonExplanationHtml(lesson) + runsHtml(lesson);
    if (!lesson.claims.empty()) {
        html += QObject::tr(
            "<p><b>What it should show</b> (checked against the measurements "
            "after the runs):</p><ul>");
        for (const LessonClaim& claim : lesson.claims) {
            html += QStringLiteral("<li>%1</li>").arg(qs(describe_claim(claim)).toHtmlEscaped());
        }
        html += QStringLiteral("</ul>");
    }
    if (lesson.on_cuda) {
        html += QObject::tr("<p><i>On a CUDA GPU: %1</i></p>")
                    .arg(qs(lesson.on_cuda->why).toHtmlEscaped());
    }
    return html;
}

QString lessonEndHtml(const LessonEnd& end) {
    QString html = QObject::tr("<b>Lesson: %1</b>").arg(end.title.toHtmlEscaped());
    if (!end.error.isEmpty()) {
        html += QStringLiteral(" — <span style='color:#d62728'>%1</span>")
                    .arg(end.error.toHtmlEscaped());
    }
    if (!end.deviceNote.isEmpty()) {
        html += QObject::tr("<br><i>On this device: %1</i>").arg(end.deviceNote.toHtmlEscaped());
    }
    for (int i = 0; i < end.checks.size(); ++i) {
        html += QStringLiteral("<br><span style='color:%1'>%2</span> %3")
                    .arg(end.holds[i] ? QStringLiteral("#2e9d5b") : QStringLiteral("#d62728"),
                         end.holds[i] ? QStringLiteral("✓") : QStringLiteral("✗"),
                         end.checks[i].toHtmlEscaped());
    }
    return html;
}

}  // namespace oomlab::ui
