// The Class window tests' class: a real `mlflow server` on a free port of 127.0.0.1, its store
// in the test's folder, and students sending to it by oomlab-cli from their own databases.
#pragma once

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "ui_test_support.h"

namespace oomlab::ui::test {

inline sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(quint16(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

// A port of 127.0.0.1 nothing listens on (the system's choice).
inline int freePort() {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(probe);
    return ntohs(address.sin_port);
}

inline bool listening(int port) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in address = loopback(port);
    const bool connected =
        ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    ::close(probe);
    return connected;
}

class ClassServer {
public:
    ~ClassServer() { stop(); }

    // Starts `mlflow server` of the trackers' environment (`python`'s folder) with its store in
    // `folder`; false when it did not answer within 90 s.
    bool start(const QString& python, const QString& folder) {
        m_folder = folder;
        const int port = freePort();
        m_uri = QStringLiteral("http://127.0.0.1:%1").arg(port);
        // A store already migrated (scripts/tracker_env.sh makes it), no job runner and one
        // process (tests/support/mlflow_server.py): it answers in 2.4 s instead of 10.
        const QString database = QDir(folder).filePath(QStringLiteral("ml.sqlite"));
        QFile::copy(QFileInfo(python).dir().filePath(QStringLiteral("../mlflow-empty.sqlite")),
                    database);
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("MLFLOW_SERVER_ENABLE_JOB_EXECUTION"),
                           QStringLiteral("false"));
        // Nor MLflow's usage telemetry, which looks up and sends to config.mlflow-telemetry.io:
        // the test reaches nothing beyond 127.0.0.1.
        environment.insert(QStringLiteral("MLFLOW_DISABLE_TELEMETRY"), QStringLiteral("true"));
        m_server.setProcessEnvironment(environment);
        m_server.setChildProcessModifier([] { ::setsid(); });
        m_server.setStandardOutputFile(QDir(folder).filePath(QStringLiteral("server.log")));
        m_server.setProcessChannelMode(QProcess::MergedChannels);
        m_server.start(
            python,
            {mlflowServerScript(), QStringLiteral("--host"), QStringLiteral("127.0.0.1"),
             QStringLiteral("--port"), QString::number(port), QStringLiteral("--workers"),
             QStringLiteral("1"), QStringLiteral("--backend-store-uri"),
             QStringLiteral("sqlite:///") + database, QStringLiteral("--artifacts-destination"),
             QDir(folder).filePath(QStringLiteral("artifacts"))});
        QElapsedTimer waited;
        waited.start();
        while (!listening(port)) {
            if (waited.elapsed() > 90000 || m_server.state() == QProcess::NotRunning) {
                return false;
            }
            QTest::qWait(500);
        }
        return true;
    }

    const QString& uri() const { return m_uri; }

    // The end of the server's log, for a start that failed (the folder goes with the test).
    QString logEnd() const {
        QFile log(QDir(m_folder).filePath(QStringLiteral("server.log")));
        if (!log.open(QIODevice::ReadOnly)) {
            return QStringLiteral("(no log)");
        }
        const QStringList lines = QString::fromUtf8(log.readAll()).split(QLatin1Char('\n'));
        return lines.mid(std::max<qsizetype>(0, lines.size() - 15)).join(QLatin1Char('\n'));
    }

    // A student's oomlab-cli (its QProcess a child of `parent`), on their "machine" (a process
    // under their login name, with its own database), started, not waited for. Students' machines
    // are not the lecturer's: their processes run at the lowest priority, so that the server and
    // the window answer on a busy machine as they would in a room.
    QProcess* startStudent(QObject* parent, const QString& student, const QStringList& arguments) {
        auto* cli = new QProcess(parent);
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("LOGNAME"), student);
        cli->setProcessEnvironment(environment);
        cli->setChildProcessModifier([] {
            const int niceness = ::nice(19);  // -1 only where it could not: then as it was
            static_cast<void>(niceness);
        });
        cli->start(
            qEnvironmentVariable("OOMLAB_CLI"),
            arguments + QStringList{QStringLiteral("--db"),
                                    QDir(m_folder).filePath(student + QStringLiteral(".sqlite")),
                                    QStringLiteral("--mlflow"), m_uri,
                                    // A send round each half second, not each 2 s: a student
                                    // who trains until seen is seen sooner.
                                    QStringLiteral("--mlflow-every"), QStringLiteral("0.5")});
        return cli;
    }

    // A short run sent to `experiment` as a version before the whole run's upload sent it:
    // without its oomlab.whole_run tag (deleted through MLflow's REST API), so that an import
    // reads its series.
    bool sendAsAnEarlierVersion(const QString& experiment) {
        QProcess send;
        send.start(
            qEnvironmentVariable("OOMLAB_CLI"),
            {QStringLiteral("run"), QStringLiteral("--db"),
             QDir(m_folder).filePath(QStringLiteral("earlier.sqlite")), QStringLiteral("--set"),
             QStringLiteral("train.max_steps=3"), QStringLiteral("--mlflow"), m_uri,
             QStringLiteral("--mlflow-experiment"), experiment});
        if (!send.waitForFinished(60000) || send.exitCode() != 0) {
            return false;
        }
        QProcess untag;
        untag.start(qEnvironmentVariable("OOMLAB_TRACKER_PYTHON"),
                    {QStringLiteral("-c"), QStringLiteral(R"(
import json, sys, urllib.parse, urllib.request
api = sys.argv[1] + "/api/2.0/mlflow/"
def post(path, body):
    request = urllib.request.Request(api + path, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request))
found = json.load(urllib.request.urlopen(
    api + "experiments/get-by-name?experiment_name=" + urllib.parse.quote(sys.argv[2])))
runs = post("runs/search", {"experiment_ids": [found["experiment"]["experiment_id"]]})["runs"]
for run in runs:
    post("runs/delete-tag", {"run_id": run["info"]["run_id"], "key": "oomlab.whole_run"})
)"),
                     m_uri, experiment});
        return untag.waitForFinished(60000) && untag.exitCode() == 0;
    }

    void stop() {
        if (m_server.state() != QProcess::NotRunning) {
            ::kill(-pid_t(m_server.processId()), SIGTERM);  // its workers too: its own group
            if (!m_server.waitForFinished(20000)) {
                ::kill(-pid_t(m_server.processId()), SIGKILL);
                m_server.waitForFinished();
            }
        }
    }

private:
    QString m_folder;
    QProcess m_server;
    QString m_uri;
};

}  // namespace oomlab::ui::test
