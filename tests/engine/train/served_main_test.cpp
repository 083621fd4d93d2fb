// This program's main (tests/support/served_gtest_main.cpp): with OOMLAB_ENGINE_SERVER set, a
// run of it starts in a copy of its own engine server, found in the folder under the program's
// name, and its output and exit are the copy's.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "test_support.h"

namespace oomlab {
namespace {

std::string this_program() {
    char path[4096] = {};
    const ssize_t size = readlink("/proc/self/exe", path, sizeof path - 1);
    return size > 0 ? std::string(path, static_cast<std::size_t>(size)) : "";
}

TEST(ServedMain, ARunOfThisProgramStartsInACopyOfItsServer) {
    const std::string program = this_program();
    ASSERT_FALSE(program.empty());
    test::TempDir dir;
    const std::string quoted_dir = test::shell_quote(dir.path());
    const std::string quoted_program = test::shell_quote(program);
    const test::CommandResult listed =
        test::run_command("OMP_NUM_THREADS=1 " + quoted_program + " engine-server " + quoted_dir +
                          " 2> " + quoted_dir +
                          "/server.log & server=$!; "
                          "for i in $(seq 300); do [ -S " +
                          quoted_dir +
                          "/oomlab_train_tests ] && break; "
                          "sleep 0.1; done; "
                          "OMP_NUM_THREADS=1 OOMLAB_ENGINE_SERVER=" +
                          quoted_dir + " " + quoted_program +
                          " --gtest_list_tests --gtest_filter='ServedMain.*'; status=$?; "
                          "kill $server; wait $server; exit $status");
    EXPECT_EQ(listed.exit_code, 0) << listed.out;
    EXPECT_NE(listed.out.find("ARunOfThisProgramStartsInACopyOfItsServer"), std::string::npos)
        << listed.out;
    const std::string log = test::read_text(dir.file("server.log"));
    EXPECT_NE(log.find("ran --gtest_list_tests of pid"), std::string::npos) << log;
}

}  // namespace
}  // namespace oomlab
