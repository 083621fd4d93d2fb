// A snapshot's source lines in the workbench's tables: a line too long for its column keeps
// what tells it apart (ui/snapshot/source_elision.h).
#include <QFontMetrics>
#include <QTableWidget>
#include <QtTest>

#include "snapshot/snapshot_tables.h"
#include "snapshot/source_elision.h"
#include "ui_test_support.h"

using namespace oomlab::ui;

class SourceElisionTest : public QObject {
    Q_OBJECT

private slots:
    // A source line too long for its column keeps its package and its file: the folders the
    // package is installed in go first, then those between the package and the file (Qt's
    // elision in the middle showed "/usr/lib/pyth…eling_gpt2.py:123").
    void aSourceLineKeepsItsPackageAndItsFile() {
        QTableWidget* table = snapshotTable(QStringLiteral("sources"), {"where", "bytes"});
        QVERIFY(dynamic_cast<SourceDelegate*>(table->itemDelegateForColumn(0)));
        const QFontMetrics metrics(table->font());
        const QString tail = QStringLiteral(".py:123 (forward) (12 blocks)");
        const QString line =
            "/usr/lib/python3/dist-packages/transformers/models/gpt2/modeling_gpt2" + tail;
        const auto shown = [&](const QString& text) {
            return elidedSource(line, metrics, metrics.horizontalAdvance(text));
        };
        QCOMPARE(shown(line), line);
        const QString installed = "…/transformers/models/gpt2/modeling_gpt2" + tail;
        QCOMPARE(shown(installed), installed);
        QCOMPARE(shown("…/transformers/…/gpt2/modeling_gpt2" + tail),
                 "…/transformers/…/gpt2/modeling_gpt2" + tail);
        QCOMPARE(shown("…/transformers/…/modeling_gpt2" + tail),
                 "…/transformers/…/modeling_gpt2" + tail);
        // Narrower, the file alone, then the function's name cut before the line's number.
        QCOMPARE(shown("modeling_gpt2" + tail), "modeling_gpt2" + tail);
        const QString cut = shown("modeling_gpt2.py:123 (forw…");
        QVERIFY2(cut.startsWith(QStringLiteral("modeling_gpt2.py:123 (")) &&
                     cut.endsWith(QStringLiteral("…")),
                 qPrintable(cut));
        // What is not a source line ("(allocated before the trace began)") reads from its start.
        const QString before = QStringLiteral("(allocated before the trace began)");
        QVERIFY(elidedSource(before, metrics, metrics.horizontalAdvance(before) / 2)
                    .startsWith(QStringLiteral("(allocated")));
        // A program's own file: its folders go, nearest the root first.
        const QString own = "/root/project/models/cache_utils" + tail;
        QCOMPARE(elidedSource(own, metrics, metrics.horizontalAdvance("/…/cache_utils" + tail)),
                 "/…/cache_utils" + tail);
        // A Windows path keeps its separator.
        const QString windows =
            "D:\\Dev\\.venv\\Lib\\site-packages\\torch\\nn\\modules\\module" + tail;
        QCOMPARE(
            elidedSource(windows, metrics, metrics.horizontalAdvance("…\\torch\\…\\module" + tail)),
            "…\\torch\\…\\module" + tail);
        delete table;
    }
};

OOMLAB_UI_TEST(SourceElisionTest)
#include "source_elision_test.moc"
