#include "lessons/lesson_dialog.h"

#include <QDialogButtonBox>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "common/formatting.h"
#include "lessons/lesson_text.h"

namespace oomlab::ui {

LessonDialog::LessonDialog(const Lesson& lesson, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Lesson: %1").arg(qs(lesson.title)));
    setObjectName(QStringLiteral("lessonDialog"));
    resize(640, 480);
    auto* text = new QTextBrowser(this);
    text->setHtml(lessonHtml(lesson));
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
