// The Class window against a real `mlflow server` on 127.0.0.1: students' runs, sent from
// their own databases by oomlab-cli under their login names, appear by student while the
// lecturer follows; a run sent later appears at the next refresh; the selected runs open in
// Compare named after their students; a server that stops is said, the runs stay. Needs
// MLflow (OOMLAB_TRACKER_PYTHON, which `./oomlab.sh test` sets) and skips without it.
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLineEdit>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

#include "compare/compare_page.h"
#include "runs/class_window.h"
#include "runs/run_database.h"
#include "ui_test_support.h"
#include "window/main_menus.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(quint16(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

// A port of 127.0.0.1 nothing listens on (the system's choice).
int freePort() {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(probe);
    return ntohs(address.sin_port);
}

bool listening(int port) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in address = loopback(port);
    const bool connected =
        ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    ::close(probe);
    return connected;
}

}  // namespace

class ClassWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QProcess m_server;
    QString m_uri;

    // A student's run, trained and sent from their own database.
    void studentRun(const QString& student, const QString& name) {
        QProcess cli;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("LOGNAME"), student);
        cli.setProcessEnvironment(environment);
        cli.start(qEnvironmentVariable("OOMLAB_CLI"),
                  {QStringLiteral("run"), QStringLiteral("--db"),
                   m_dir.filePath(student + QStringLiteral(".sqlite")), QStringLiteral("--name"),
                   name, QStringLiteral("--set"), QStringLiteral("train.max_steps=6"),
                   QStringLiteral("--mlflow"), m_uri});
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        QVERIFY2(!cli.readAllStandardError().contains("was not sent"), "the run was not sent");
    }

    void stopServer() {
        if (m_server.state() != QProcess::NotRunning) {
            ::kill(-pid_t(m_server.processId()), SIGTERM);  // its workers too: its own group
            if (!m_server.waitForFinished(20000)) {
                ::kill(-pid_t(m_server.processId()), SIGKILL);
                m_server.waitForFinished();
            }
        }
    }

private slots:
    void initTestCase() {
        const QString python = qEnvironmentVariable("OOMLAB_TRACKER_PYTHON");
        if (python.isEmpty() || qEnvironmentVariableIsEmpty("OOMLAB_CLI")) {
            QSKIP("OOMLAB_TRACKER_PYTHON or OOMLAB_CLI is not set (./oomlab.sh test sets both)");
        }
        const int port = freePort();
        m_uri = QStringLiteral("http://127.0.0.1:%1").arg(port);
        m_server.setChildProcessModifier([] { ::setsid(); });
        m_server.setStandardOutputFile(m_dir.filePath(QStringLiteral("server.log")));
        m_server.setProcessChannelMode(QProcess::MergedChannels);
        m_server.start(
            QFileInfo(python).dir().filePath(QStringLiteral("mlflow")),
            {QStringLiteral("server"), QStringLiteral("--host"), QStringLiteral("127.0.0.1"),
             QStringLiteral("--port"), QString::number(port), QStringLiteral("--workers"),
             QStringLiteral("1"), QStringLiteral("--backend-store-uri"),
             QStringLiteral("sqlite:///") + m_dir.filePath(QStringLiteral("ml.sqlite")),
             QStringLiteral("--artifacts-destination"),
             m_dir.filePath(QStringLiteral("artifacts"))});
        QElapsedTimer waited;
        waited.start();
        while (!listening(port)) {
            QVERIFY2(waited.elapsed() < 90000 && m_server.state() != QProcess::NotRunning,
                     "mlflow server did not start");
            QTest::qWait(500);
        }
        studentRun(QStringLiteral("ann"), QStringLiteral("batch 32"));
        studentRun(QStringLiteral("ben"), QStringLiteral("batch 32"));
    }

    void cleanupTestCase() { stopServer(); }

    void theClassAppearsByStudentAndOpensInCompare() {
        auto window = test::shownWindow(m_dir.filePath(QStringLiteral("lecturer.sqlite")));
        QVERIFY(window);
        ClassWindow* classWindow = window->menus()->openClassWindow();
        classWindow->uriField()->setText(m_uri);
        classWindow->setRefreshSeconds(2);
        classWindow->follow(true);
        QVERIFY(classWindow->following());
        QTRY_COMPARE_WITH_TIMEOUT(classWindow->listedRuns().size(), 2, 30000);
        QVERIFY2(classWindow->status().contains(QStringLiteral("2 runs from 2 students")),
                 qPrintable(classWindow->status()));

        // A run that ends while the lecturer follows: there by the next refresh or two.
        studentRun(QStringLiteral("cat"), QStringLiteral("batch 64"));
        QElapsedTimer sent;
        sent.start();
        QTRY_COMPARE_WITH_TIMEOUT(classWindow->listedRuns().size(), 3, 30000);
        qInfo("a run sent appeared in the class window %lld ms after it was sent (refresh 2 s)",
              sent.elapsed());

        QSignalSpy compare(classWindow, &ClassWindow::compareRequested);
        emit classWindow->compareRequested(classWindow->listedRuns());
        QCOMPARE(compare.size(), 1);
        QTRY_COMPARE(window->tabs()->currentIndex(), int(MainWindow::CompareTab));
        QStringList names;
        for (const RunRecord& run : window->database()->store().list_runs()) {
            names << QString::fromStdString(run.name);
        }
        names.sort();
        QCOMPARE(names,
                 QStringList({QStringLiteral("ann: batch 32"), QStringLiteral("ben: batch 32"),
                              QStringLiteral("cat: batch 64")}));

        // The server stops: said at the next refresh, the runs listed stay.
        stopServer();
        QTRY_VERIFY_WITH_TIMEOUT(classWindow->status().contains(QStringLiteral("did not answer")),
                                 30000);
        QCOMPARE(classWindow->listedRuns().size(), 3);
        classWindow->follow(false);
    }
};

OOMLAB_UI_TEST_MAIN(ClassWindowTest)
#include "class_window_test.moc"
