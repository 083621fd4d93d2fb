#include "window/lesson_opening.h"

#include <QFutureWatcher>
#include <QMessageBox>
#include <QtConcurrent>
#include <memory>
#include <string>

#include "common/formatting.h"
#include "lessons/lesson_flow.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/trackers/served_file.h"
#include "window/main_window.h"

namespace oomlab::ui {
namespace {

// The text of the file at a served address, or why not: read off the window's thread.
struct Fetched {
    std::string text;
    QString error;
};

void finish(MainWindow* window, const std::function<void(LessonFlow*, const QString&)>& done,
            const std::function<Lesson()>& read) {
    LessonFlow* flow = nullptr;
    QString error;
    try {
        flow = window->openLesson(read());
    } catch (const std::exception& refused) {
        error = qs(refused.what());
    }
    if (!error.isEmpty()) {
        auto* box = new QMessageBox(QMessageBox::Warning, QObject::tr("Open lesson"), error,
                                    QMessageBox::Ok, window);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    if (done) {
        done(flow, error);
    }
}

}  // namespace

void openLessonFrom(MainWindow* window, const QString& source,
                    std::function<void(LessonFlow*, const QString& error)> done) {
    const std::string where = ss(source);
    if (!trackers::is_http_url(where)) {
        finish(window, done, [where] { return find_or_load_lesson(where); });
        return;
    }
    auto* watcher = new QFutureWatcher<Fetched>(window);
    QObject::connect(watcher, &QFutureWatcher<Fetched>::finished, window,
                     [window, watcher, where, done = std::move(done)] {
                         const Fetched fetched = watcher->result();
                         watcher->deleteLater();
                         finish(window, done, [&]() -> Lesson {
                             if (!fetched.error.isEmpty()) {
                                 throw std::runtime_error(ss(fetched.error));
                             }
                             return parse_lesson(fetched.text, where);
                         });
                     });
    watcher->setFuture(QtConcurrent::run([where] {
        try {
            return Fetched{trackers::fetch_served_file(where), {}};
        } catch (const std::exception& error) {
            return Fetched{{}, qs(error.what())};
        }
    }));
}

}  // namespace oomlab::ui
