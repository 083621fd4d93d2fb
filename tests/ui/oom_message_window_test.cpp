// An out-of-memory message in the workbench (File → Explain an out-of-memory message…): real
// messages other programs printed (tests/data/wild/messages), pasted or read from the end of a
// log, get the explanation and verdict `oomlab-cli explain` gives; a text without one is said
// to hold none.
#include <QAction>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QTemporaryDir>
#include <QtTest>

#include "common/formatting.h"
#include "oomlab/advice/oom_message.h"
#include "snapshot/oom_message_window.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class OomMessageWindowTest : public QObject {
    Q_OBJECT

private:
    static QString wild(const QString& name) {
        QFile file(test::fixture(QStringLiteral("wild/messages/") + name));
        return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
    }

private slots:
    // The File menu opens the window; a pasted message is explained once the text rests.
    void theFileMenuOpensItAndAPastedMessageIsExplained() {
        MainWindow window;
        QAction* action = nullptr;
        for (QAction* each : window.menuBar()->actions().first()->menu()->actions()) {
            action = each->text().contains(QStringLiteral("out-of-memory message")) ? each : action;
        }
        QVERIFY(action);
        action->trigger();
        auto* opened = window.findChild<OomMessageWindow*>();
        QVERIFY(opened);
        QSignalSpy explained(opened, &OomMessageWindow::explained);
        const QString text =
            wild(QStringLiteral("148-asyncalloc-aligned-columns-held-elsewhere.txt"));
        QVERIFY(!text.isEmpty());
        opened->messageEdit()->setPlainText(text);  // as a paste: explained after a pause
        QVERIFY(explained.wait(5000));
        QCOMPARE(opened->verdict(), QStringLiteral("held_elsewhere"));
        const QString shown = opened->explanationText();
        QVERIFY2(shown.contains(QStringLiteral("16.80 GiB")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("asked for 320.00 MiB on GPU 0 of 23.69 GiB")),
                 qPrintable(shown));
    }

    // The window shows what the command line says, for every real message of the corpus.
    void eachRealMessageGetsTheCommandLinesVerdict() {
        OomMessageWindow window;
        QFile list(test::fixture(QStringLiteral("wild/messages/EXPECTED.tsv")));
        QVERIFY(list.open(QIODevice::ReadOnly));
        list.readLine();  // the header
        int shown = 0;
        while (!list.atEnd()) {
            const QString name = QString::fromUtf8(list.readLine()).section('\t', 0, 0);
            const QString text = wild(name);
            window.setMessage(text);
            const OomExplanation e = explain_oom_message(ss(text));
            QCOMPARE(window.verdict(), QString::fromLatin1(oom_verdict_name(e.verdict)));
            QVERIFY2(window.explanationText().contains(qs(e.summary)), qPrintable(name));
            ++shown;
        }
        QVERIFY(shown >= 100);
    }

    // A log's end is read; a text without a message says so, in the command line's words.
    void aLogsEndIsReadAndATextWithoutAMessageIsSaidToHoldNone() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("train.log"));
        QFile log(path);
        QVERIFY(log.open(QIODevice::WriteOnly));
        const QByteArray line = "step 1 loss 2.31\n";
        while (log.size() < 2 * OomMessageWindow::kLogTail) {
            log.write(line);
        }
        log.write(wild(QStringLiteral("001-cached-free-gt-requested.txt")).toUtf8());
        log.close();
        OomMessageWindow window;
        QVERIFY(window.openLog(path));
        QCOMPARE(window.verdict(), QStringLiteral("device_not_full"));
        QVERIFY(window.messageEdit()->toPlainText().size() <= OomMessageWindow::kLogTail);
        // The text shown is said to be the log's end, until it is edited.
        auto* source = window.findChild<QLabel*>(QStringLiteral("oomMessageSource"));
        QVERIFY(source);
        QVERIFY2(source->text().startsWith(QStringLiteral("the last ")) &&
                     source->text().contains(QStringLiteral("train.log")),
                 qPrintable(source->text()));

        window.setMessage(QStringLiteral("step 1 loss 2.31"));
        QCOMPARE(window.verdict(), QString());
        QVERIFY(source->text().isEmpty());
        QVERIFY2(window.explanationText().contains(QStringLiteral("no out-of-memory message")),
                 qPrintable(window.explanationText()));
        QVERIFY(!window.openLog(dir.filePath(QStringLiteral("missing.log"))));
        QVERIFY2(window.explanationText().contains(QStringLiteral("missing.log")),
                 qPrintable(window.explanationText()));
    }
};

OOMLAB_UI_TEST(OomMessageWindowTest)
#include "oom_message_window_test.moc"
