// `oomlab --export-plot RUN --view VIEW --out FILE`: the real binary, without a display,
// writes each view of a saved run as a valid image of the asked size, and refuses files it
// must not replace; a --db it cannot open is refused, never replaced by another database.
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QtTest>

#include <atomic>

#include "oomlab/session/run_session.h"
#include "ui_test_support.h"

using namespace oomlab;

class PlotExportTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_db;
    qint64 m_runId = 0;

    int exportPlot(const QStringList& arguments, QString* error = nullptr) {
        QProcess oomlab;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("DISPLAY"));  // as on a server
        environment.remove(QStringLiteral("WAYLAND_DISPLAY"));
        environment.remove(QStringLiteral("QT_QPA_PLATFORM"));
        oomlab.setProcessEnvironment(environment);
        oomlab.start(ui::test::guiProgram(), QStringList{QStringLiteral("--db"), m_db} + arguments);
        if (!oomlab.waitForFinished(60000)) {
            oomlab.kill();
            return -1;
        }
        if (error) {
            *error = QString::fromUtf8(oomlab.readAllStandardError());
        }
        return oomlab.exitStatus() == QProcess::NormalExit ? oomlab.exitCode() : -1;
    }

private slots:
    void initTestCase() {
        m_db = m_dir.filePath(QStringLiteral("runs.sqlite"));
        RunStore store = RunStore::open(m_db.toStdString());
        class Quiet : public RunListener {
        } quiet;
        std::atomic<bool> cancel{false};
        ExperimentConfig config = ui::test::tinyConfig(12);
        config.memory.cap_mb = 64;
        m_runId = run_and_record(config, "exported", store, quiet, cancel).run_id;
        QVERIFY(m_runId > 0);
    }

    void writesEveryViewInEveryFormat_data() {
        QTest::addColumn<QString>("view");
        QTest::addColumn<QString>("suffix");
        for (const char* view : {"loss", "memory", "phases", "breakdown"}) {
            for (const char* suffix : {"png", "svg", "pdf"}) {
                QTest::addRow("%s.%s", view, suffix) << view << suffix;
            }
        }
    }

    void writesEveryViewInEveryFormat() {
        QFETCH(QString, view);
        QFETCH(QString, suffix);
        const QString file = m_dir.filePath(view + QLatin1Char('.') + suffix);
        QString error;
        QCOMPARE(exportPlot({QStringLiteral("--export-plot"), QString::number(m_runId),
                             QStringLiteral("--view"), view, QStringLiteral("--out"), file,
                             QStringLiteral("--size"), QStringLiteral("900x500")},
                            &error),
                 0);
        QFile written(file);
        QVERIFY2(written.open(QIODevice::ReadOnly), qPrintable(error));
        const QByteArray head = written.read(64);
        if (suffix == QLatin1String("png")) {
            const QImage image(file);
            QVERIFY(!image.isNull());
            QCOMPARE(image.size(), QSize(900, 500));
        } else if (suffix == QLatin1String("svg")) {
            QVERIFY(head.contains("<?xml") || head.contains("<svg"));
            written.seek(0);
            const QByteArray svg = written.readAll();
            QVERIFY(svg.contains("width=\"900") || svg.contains("viewBox=\"0 0 900 500\""));
            if (view == QLatin1String("memory")) {
                // Each legend label once (it came out twice, 3.75 px apart).
                QCOMPARE(svg.count(">allocated<"), 1);
                QCOMPARE(svg.count(">step peak<"), 1);
            }
        } else {
            QVERIFY(head.startsWith("%PDF"));
        }
    }

    // A mistyped database is named, never created.
    void refusesADatabaseThatIsNotThere() {
        const QString missing = m_dir.filePath(QStringLiteral("runs.sqlte"));
        QString error;
        QCOMPARE(exportPlot({QStringLiteral("--db"), missing, QStringLiteral("--export-plot"),
                             QString::number(m_runId), QStringLiteral("--out"),
                             m_dir.filePath(QStringLiteral("missing.png"))},
                            &error),
                 2);
        QVERIFY2(error.contains(QStringLiteral("there is no run database at ") + missing),
                 qPrintable(error));
        QVERIFY(!QFileInfo::exists(missing));
    }

    void refusesWhatItMustNotReplace() {
        const QString notes = m_dir.filePath(QStringLiteral("notes.png"));
        QFile file(notes);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("my notes");
        file.close();
        QString error;
        QCOMPARE(exportPlot({QStringLiteral("--export-plot"), QString::number(m_runId),
                             QStringLiteral("--out"), notes},
                            &error),
                 2);
        QVERIFY2(error.contains(QStringLiteral("--force")), qPrintable(error));
        QCOMPARE(exportPlot({QStringLiteral("--export-plot"), QString::number(m_runId),
                             QStringLiteral("--out"), m_db, QStringLiteral("--force")}),
                 2);  // never the database
        QCOMPARE(exportPlot({QStringLiteral("--export-plot"), QStringLiteral("999"),
                             QStringLiteral("--out"), m_dir.filePath(QStringLiteral("x.png"))},
                            &error),
                 2);
        QVERIFY2(error.contains(QStringLiteral("no run 999")), qPrintable(error));
        QCOMPARE(exportPlot({QStringLiteral("--export-plot"), QString::number(m_runId),
                             QStringLiteral("--view"), QStringLiteral("pie"),
                             QStringLiteral("--out"), m_dir.filePath(QStringLiteral("y.png"))}),
                 2);
    }

    // A --db that cannot be opened (a text file, a damaged store) ends the program with its
    // reason before any window: it never trains into the user's default database instead.
    void aNamedDatabaseThatCannotBeOpenedIsNeverReplaced() {
        const QString notes = m_dir.filePath(QStringLiteral("notes.txt"));
        QFile file(notes);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("my notes, not a database\n").repeated(50));
        file.close();
        QTemporaryDir home;
        QProcess oomlab;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("XDG_DATA_HOME"), home.path());
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        oomlab.setProcessEnvironment(environment);
        const QString shot = m_dir.filePath(QStringLiteral("shot.png"));
        oomlab.start(ui::test::guiProgram(),
                     {QStringLiteral("--db"), notes, QStringLiteral("--screenshot"), shot});
        QVERIFY(oomlab.waitForFinished(60000));
        const QString error = QString::fromUtf8(oomlab.readAllStandardError());
        QCOMPARE(oomlab.exitCode(), 2);
        QVERIFY2(error.contains(QStringLiteral("oomlab: ") + notes), qPrintable(error));
        QVERIFY(!QFile::exists(shot));
        QVERIFY2(!QFile::exists(home.filePath(QStringLiteral("oomlab/runs.sqlite"))),
                 "the default database was created");
        QVERIFY(QFile(notes).size() == 50 * 25);
    }

    // A screenshot of settings that cannot run, or of a file that is no snapshot, says why on
    // standard error at once (it waited two minutes for runs that never started, or put its
    // reason only in the picture).
    void aScreenshotThatCannotBeTakenSaysWhyAtOnce() {
        QTemporaryDir home;
        const auto screenshot = [&](const QStringList& arguments, QString* error) {
            QProcess oomlab;
            QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
            environment.insert(QStringLiteral("XDG_DATA_HOME"), home.path());
            environment.insert(QStringLiteral("XDG_CONFIG_HOME"), home.path());
            environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
            oomlab.setProcessEnvironment(environment);
            oomlab.start(ui::test::guiProgram(), arguments);
            if (!oomlab.waitForFinished(60000)) {
                oomlab.kill();
                return -1;
            }
            *error = QString::fromUtf8(oomlab.readAllStandardError());
            return oomlab.exitCode();
        };
        const QString shot = m_dir.filePath(QStringLiteral("cannot.png"));
        QString error;
        QCOMPARE(screenshot({QStringLiteral("--fresh"), QStringLiteral("--set"),
                             QStringLiteral("dataset.path=/nonexistent.tsv"),
                             QStringLiteral("--screenshot"), shot},
                            &error),
                 2);
        QVERIFY2(error.contains(QStringLiteral("/nonexistent.tsv")), qPrintable(error));
        QVERIFY(!error.contains(QStringLiteral("timed out")));
        QVERIFY(!QFile::exists(shot));
        QCOMPARE(screenshot({QStringLiteral("--fresh"), QStringLiteral("--snapshot"), m_db,
                             QStringLiteral("--screenshot"), shot},
                            &error),
                 1);
        QVERIFY2(error.contains(QStringLiteral("neither a memory snapshot")), qPrintable(error));
    }
};

OOMLAB_UI_TEST(PlotExportTest)
#include "plot_export_test.moc"
