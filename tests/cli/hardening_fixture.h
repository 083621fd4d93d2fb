// What the hardening tests share: a temporary folder with a database of real runs, and
// helpers to mount a folder and to find Python.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab::test {

class Hardening : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    std::string file(const std::string& name) const { return m_dir.file(name); }
    // A database holding one completed run (make_test_database.sh's one-run).
    void make_database() { test::copy_test_database("one-run", db()); }
    std::size_t run_count() const { return RunStore::open(db()).list_runs().size(); }
    test::TempDir m_dir;
};

// Unmounts `path` when the test ends, however it ends.
struct Unmount {
    std::string path;
    ~Unmount() { test::run_command("umount " + test::shell_quote(path) + " 2>/dev/null"); }
};

inline bool python_available() {
    return test::run_command("command -v python3 >/dev/null 2>&1").exit_code == 0;
}

}  // namespace oomlab::test
