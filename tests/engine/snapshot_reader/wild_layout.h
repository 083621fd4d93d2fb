// The fixture of the tests of layouts real programs wrote that no kept file in tests/data/wild
// shows: each rebuilt field by field (tests/data/snapshots/make_wild_layouts.py) and read.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "test_support.h"

namespace oomlab::test {

// The layouts real programs wrote that no kept file shows (their licences let us keep none),
// rebuilt field by field with figures of our own (tests/data/snapshots/make_wild_layouts.py).
class WildLayout : public ::testing::Test {
protected:
    void SetUp() override {
        if (test::run_command("command -v python3 >/dev/null 2>&1").exit_code != 0) {
            GTEST_SKIP() << "no python3 to build the snapshot";
        }
    }
    SnapshotReport read(const std::string& layout) {
        const std::string path = m_dir.file(layout + ".pickle");
        EXPECT_EQ(test::built_snapshot("make_wild_layouts.py", path, layout), 0) << layout;
        return read_snapshot_report(path);
    }

private:
    test::TempDir m_dir;
};

inline std::vector<std::pair<std::string, std::int64_t>> lines_of(const SnapshotDevice& device) {
    std::vector<std::pair<std::string, std::int64_t>> lines;
    for (const SnapshotLine& line : device.at_peak) {
        lines.emplace_back(line.where, line.bytes);
    }
    return lines;
}

}  // namespace oomlab::test
