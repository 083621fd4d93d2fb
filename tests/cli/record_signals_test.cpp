// `oomlab-cli record` stopped, killed or timing out never leaves the program behind: a signal
// meant for it stops the program's whole group and every try to come, a SIGKILL takes the
// program with it, and a daemon in a session of its own (stderr kept open) neither outlives a
// try's --timeout nor keeps record waiting once the program has ended. Plain shell programs:
// what is checked is the processes, not PyTorch.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"
#include "test_support.h"

namespace oomlab {
namespace {

class RecordStopped : public ::testing::Test {
protected:
    // Runs `script` in a shell in the test's folder, $CLI the program, the folder its TMPDIR
    // (where record makes its own folder).
    test::CommandResult shell(const std::string& script) {
        return test::run_command("cd " + test::shell_quote(m_dir.path()) +
                                 " && TMPDIR=" + test::shell_quote(m_dir.path()) + " CLI=" +
                                 test::shell_quote(test::cli_program()) + " timeout 120 sh -c " +
                                 test::shell_quote(script) + " 2>&1 </dev/null");
    }
    // Whether a process whose command line is exactly `command` is still there after 5 s for it
    // to leave; if so, it is killed, so that no test leaves one behind.
    static bool outlived(const std::string& command) {
        const bool there =
            test::run_command("for i in $(seq 50); do pgrep -xf " + test::shell_quote(command) +
                              " >/dev/null || exit 1; sleep 0.1; done")
                .exit_code == 0;
        test::run_command("pkill -KILL -xf " + test::shell_quote(command));
        return there;
    }
    // The milliseconds a script's "took N ms" line says; -1 without one.
    static long took_ms(const std::string& out) {
        const std::size_t took = out.find("took ");
        return took == std::string::npos ? -1 : std::stol(out.substr(took + 5));
    }
    test::TempDir m_dir;
};

// SIGTERM during a try whose program ignores it: the try's whole group is killed --kill-after
// seconds later, the try still to come is not run, and record exits 128 + 15 (it waited for
// the try's --timeout and then ran the next one).
TEST_F(RecordStopped, ATerminationStopsTheTryItsGroupAndEveryTryToCome) {
    const test::CommandResult result = shell(R"SH(
$CLI record --out m.pickle --try expandable_segments:True --try max_split_size_mb:64 \
    --timeout 600 --kill-after 1 -- sh -c 'echo ran >> runs
        if [ -n "$PYTORCH_CUDA_ALLOC_CONF" ]; then trap "" TERM; sleep 991 & sleep 991; fi' \
    > out.txt 2>&1 &
record=$!
for i in $(seq 100); do [ "$(cat runs 2>/dev/null | wc -l)" = 2 ] && break; sleep 0.1; done
sleep 0.5
started=$(date +%s%N)
kill -TERM $record
wait $record
echo "exit $?"
echo "took $(( ($(date +%s%N) - started) / 1000000 )) ms"
echo "runs $(wc -l < runs)"
cat out.txt
)SH");
    EXPECT_FALSE(outlived("sleep 991")) << "the try's group is still running\n" << result.out;
    EXPECT_NE(result.out.find("exit 143"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("runs 2"), std::string::npos) << "the second try ran\n" << result.out;
    EXPECT_NE(result.out.find("the tries still to come (1) are not run"), std::string::npos)
        << result.out;
    // The --kill-after second (default 10 s) and the killing; far from the try's 600 s.
    EXPECT_GE(took_ms(result.out), 1000) << result.out;
    EXPECT_NE(result.out.find("it is killed in 1 s if still running"), std::string::npos)
        << result.out;
    EXPECT_LT(took_ms(result.out), 30000) << result.out;
}

// Killed itself (SIGKILL, as `timeout -k` does after its SIGTERM), record takes the program's
// whole group with it: a parent-death signal for the program, a guardian for the rest, which
// also removes record's own folder in TMPDIR (the program's Python hook).
TEST_F(RecordStopped, KilledItTakesTheProgramsGroupWithIt) {
    const test::CommandResult result = shell(R"SH(
$CLI record --out m.pickle -- sh -c 'sleep 992 & sleep 992' > out.txt 2>&1 &
record=$!
for i in $(seq 100); do [ "$(pgrep -xf 'sleep 992' | wc -l)" = 2 ] && break; sleep 0.1; done
echo "started $(pgrep -xf 'sleep 992' | wc -l), folders $(ls -d oomlab-record-* | wc -l)"
kill -KILL $record
for i in $(seq 50); do ls -d oomlab-record-* >/dev/null 2>&1 || break; sleep 0.1; done
echo "left $(ls -d oomlab-record-* 2>/dev/null | wc -l)"
)SH");
    ASSERT_NE(result.out.find("started 2, folders 1"), std::string::npos) << result.out;
    EXPECT_FALSE(outlived("sleep 992")) << "the program outlived record";
    EXPECT_NE(result.out.find("left 0"), std::string::npos) << result.out;
}

// A try past its --timeout whose program started a daemon in a session of its own, standard
// error kept open: the daemon is stopped with it, and record goes on at once (it read the
// daemon's standard error until it ended on its own).
TEST_F(RecordStopped, ATryPastItsTimeStopsWhatLeftItsSession) {
    const test::CommandResult result = shell(R"SH(
started=$(date +%s%N)
$CLI record --out m.pickle --try expandable_segments:True --timeout 1 -- sh -c '
    [ -z "$PYTORCH_CUDA_ALLOC_CONF" ] || { setsid sleep 993 & sleep 993; }'
echo "exit $?"
echo "took $(( ($(date +%s%N) - started) / 1000000 )) ms"
)SH");
    EXPECT_FALSE(outlived("sleep 993")) << "the daemon outlived the try\n" << result.out;
    EXPECT_NE(result.out.find("exit 0"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("(--timeout)"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("(sleep)"), std::string::npos) << "the daemon is not named\n"
                                                             << result.out;
    EXPECT_GE(took_ms(result.out), 0) << result.out;
    EXPECT_LT(took_ms(result.out), 60000) << result.out;
}

// --kill-after holds past --timeout too: a try that ignores SIGTERM is killed that many
// seconds after it (0 here), not after the 5 s of grace. Counted in the try's own 0.1 s ticks,
// which a busy machine makes fewer, never more: about 10 before its timeout, 50 more with the
// default grace.
TEST_F(RecordStopped, KillAfterHoldsPastTheTimeout) {
    const test::CommandResult result = shell(R"SH(
$CLI record --out m.pickle --try expandable_segments:True --timeout 1 --kill-after 0 -- sh -c '
    [ -z "$PYTORCH_CUDA_ALLOC_CONF" ] ||
        { trap "" TERM; while :; do echo t >> ticks; sleep 0.1; done; }'
echo "exit $?"
echo "ticks $(wc -l < ticks)"
)SH");
    EXPECT_NE(result.out.find("exit 0"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("(--timeout)"), std::string::npos) << result.out;
    const std::size_t at = result.out.find("ticks ");
    ASSERT_NE(at, std::string::npos) << result.out;
    EXPECT_LT(std::stol(result.out.substr(at + 6)), 35) << result.out;
}

// Without --try, a program that ends leaving a daemon with its standard error open: record
// ends with the program's status, naming the daemon it stopped (it waited for ever).
TEST_F(RecordStopped, ADaemonLeftRunningIsStoppedAndNamed) {
    const test::CommandResult result = shell(R"SH(
$CLI record --out m.pickle -- sh -c 'setsid sleep 994 & exit 3'
echo "exit $?"
)SH");
    EXPECT_FALSE(outlived("sleep 994")) << "the daemon outlived record\n" << result.out;
    EXPECT_NE(result.out.find("exit 3"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("left 1 process running when it ended, stopped with it: "),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find(" (sleep)"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace oomlab
