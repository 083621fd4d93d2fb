// A lesson opened where the command line or a double-click names it (`oomlab FILE.json`,
// `oomlab --lesson URL`): a file, and a file a lecturer serves over HTTP, read while the
// window stays free; an address that serves no lesson, or no server, said with the address.
#include <QFile>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QtTest>

#include "common/formatting.h"
#include "http_test_server.h"
#include "lessons/lesson_flow.h"
#include "ui_test_support.h"
#include "window/lesson_opening.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

const char* const kServedLesson = R"({"title": "Served lesson", "explanation": "Two batch sizes.",
  "base": {"train.max_steps": 2},
  "runs": [{"label": "small", "set": {"train.batch_size": 8}},
           {"label": "large", "set": {"train.batch_size": 64}}]})";

// What openLessonFrom handed back, once it has.
struct Opened {
    bool done = false;
    LessonFlow* flow = nullptr;
    QString error;
};

Opened openAndWait(MainWindow& window, const QString& source) {
    auto opened = std::make_shared<Opened>();
    openLessonFrom(&window, source, [opened](LessonFlow* flow, const QString& error) {
        *opened = {true, flow, error};
    });
    [[maybe_unused]] const bool done = QTest::qWaitFor([&] { return opened->done; }, 30000);
    return *opened;
}

// The message box the window shows an error in, closed; its text.
QString shownError(MainWindow& window) {
    const auto boxes = window.findChildren<QMessageBox*>();
    if (boxes.isEmpty()) {
        return {};
    }
    const QString text = boxes.last()->text();
    for (QMessageBox* box : boxes) {
        box->close();
    }
    return text;
}

}  // namespace

class LessonOpeningTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void aLessonFileOpensAtItsLesson() {
        MainWindow window(test::windowOptions(m_dir.filePath("file.sqlite")));
        window.show();
        const QString path = m_dir.filePath("served.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(kServedLesson);
        file.close();
        const Opened opened = openAndWait(window, path);
        QVERIFY2(opened.flow, qPrintable(opened.error));
        QCOMPARE(window.lessonFlow(), opened.flow);
        QCOMPARE(opened.flow->windowTitle(), QStringLiteral("Lesson: Served lesson"));
    }

    void aServedLessonOpensWhileTheWindowStaysFree() {
        std::atomic<bool> release{false};
        test::HttpTestServer server([&](const std::string& head) {
            while (!release) {  // the lecturer's server is slow to answer
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            return head.rfind("GET /class/batch.json ", 0) == 0
                       ? test::HttpTestServer::reply("200 OK", kServedLesson)
                       : test::HttpTestServer::reply("404 Not Found", "no such file");
        });
        MainWindow window(test::windowOptions(m_dir.filePath("served.sqlite")));
        window.show();
        auto opened = std::make_shared<Opened>();
        openLessonFrom(&window, server.uri() + QStringLiteral("/class/batch.json"),
                       [opened](LessonFlow* flow, const QString& error) {
                           *opened = {true, flow, error};
                       });
        QTest::qWait(200);  // events are handled while the server has not answered
        QVERIFY(!opened->done);
        release = true;
        QTRY_VERIFY_WITH_TIMEOUT(opened->done, 30000);
        QVERIFY2(opened->flow, qPrintable(opened->error));
        QCOMPARE(qs(opened->flow->lesson().title), QStringLiteral("Served lesson"));
        QCOMPARE(window.lessonFlow(), opened->flow);

        const QString missing = server.uri() + QStringLiteral("/class/nothing.json");
        const Opened notThere = openAndWait(window, missing);
        QVERIFY(notThere.done && !notThere.flow);
        QVERIFY2(notThere.error.startsWith(missing) && notThere.error.contains("HTTP 404"),
                 qPrintable(notThere.error));
        QCOMPARE(shownError(window), notThere.error);
    }

    void aServedFileThatIsNoLessonIsNamedWithItsKey() {
        test::HttpTestServer server([](const std::string&) {
            return test::HttpTestServer::reply(
                "200 OK", R"({"title": "x", "explanation": "y", "base": {}, "runs": 3})");
        });
        MainWindow window(test::windowOptions(m_dir.filePath("broken.sqlite")));
        window.show();
        const QString url = server.uri() + QStringLiteral("/lesson.json");
        const Opened opened = openAndWait(window, url);
        QVERIFY(opened.done && !opened.flow);
        QVERIFY2(opened.error.contains(url) && opened.error.contains("runs"),
                 qPrintable(opened.error));
        QVERIFY(!window.lessonFlow());
        shownError(window);
    }

    void noServerIsSaidWithTheAddress() {
        MainWindow window(test::windowOptions(m_dir.filePath("down.sqlite")));
        window.show();
        const QString url = QStringLiteral("http://127.0.0.1:9/lesson.json");  // discard: closed
        const Opened opened = openAndWait(window, url);
        QVERIFY(opened.done && !opened.flow);
        QVERIFY2(opened.error.startsWith(url), qPrintable(opened.error));
        shownError(window);
    }
};

OOMLAB_UI_TEST(LessonOpeningTest)
#include "lesson_opening_test.moc"
