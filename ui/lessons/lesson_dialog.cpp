#include "lessons/lesson_dialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace oomlab::ui {

LessonDialog::LessonDialog(const Lesson& lesson, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Lesson: %1").arg(lesson.title));
    setObjectName(QStringLiteral("lessonDialog"));
    resize(620, 460);
    auto* text = new QTextBrowser(this);
    QString html = QStringLiteral("<h3>%1</h3>").arg(lesson.title.toHtmlEscaped());
    for (const QString& paragraph : lesson.explanation.split(QStringLiteral("\n\n"))) {
        html += QStringLiteral("<p>%1</p>").arg(paragraph.toHtmlEscaped());
    }
    html += tr("<p><b>The lesson trains %n run(s):</b></p><ol>", nullptr, lesson.runs.size());
    for (const LessonRun& run : lesson.runs) {
        html += QStringLiteral("<li><b>%1</b><br><code>%2</code></li>")
                    .arg(run.label.toHtmlEscaped(),
                         run.changedKeys.isEmpty()
                             ? tr("the defaults")
                             : run.changedKeys.join(QStringLiteral("  ")).toHtmlEscaped());
    }
    html += QStringLiteral("</ol>");
    text->setHtml(html);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    QPushButton* run = buttons->addButton(tr("Run the lesson"), QDialogButtonBox::AcceptRole);
    run->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(text);
    layout->addWidget(buttons);
}

}  // namespace oomlab::ui
