// The workbench's test program: `oomlab_ui_tests TEST [QTest's arguments]`, where TEST is the
// name of a test file in tests/ui (class_window_test) whose test class is run. Its processes
// may start as copies of `oomlab_ui_tests engine-server FOLDER`, which loaded the training
// engine once (oomlab/session/engine_server.h; `./oomlab.sh test` starts one).
#include <cstdio>
#include <vector>

#include "oomlab/session/engine_server.h"
#include "ui_test_support.h"

namespace {

int run_test(int argc, char** argv) {
    const auto& tests = oomlab::ui::test::registeredTests();
    const auto test = argc > 1 ? tests.find(argv[1]) : tests.end();
    if (test == tests.end()) {
        std::fprintf(stderr, "usage: %s TEST [QTest's arguments...], TEST one of:\n", argv[0]);
        for (const auto& [name, run] : tests) {
            std::fprintf(stderr, "  %s\n", name.c_str());
        }
        return 2;
    }
    // QApplication and QTest read the arguments after the program's name: the test's own.
    std::vector<char*> arguments{argv[0]};
    arguments.insert(arguments.end(), argv + 2, argv + argc);
    arguments.push_back(nullptr);
    return test->second(argc - 1, arguments.data());
}

}  // namespace

int main(int argc, char** argv) {
    return oomlab::session::run_main(argc, argv, run_test);
}
