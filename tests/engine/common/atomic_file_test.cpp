// AtomicFile's temporary files: what a killed writer left is removed by the next writer of the
// same target; a live writer's, a fresh one's and other files are left alone.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "oomlab/common/atomic_file.h"
#include "test_support.h"

namespace oomlab {
namespace {

// A process id no process has: past Linux's largest (pid_max is at most 2^22).
constexpr const char* kGoneWriter = "2147483646";

void write_aged(const std::string& path, std::time_t age_s) {
    std::ofstream(path) << "part of a cache\n";
    const std::time_t when = std::time(nullptr) - age_s;
    const utimbuf times{when, when};
    ASSERT_EQ(utime(path.c_str(), &times), 0) << path;
}

TEST(AtomicFile, AWriterRemovesWhatAKilledWriterOfItsTargetLeft) {
    test::TempDir dir;
    const std::string target = dir.file("glove.cache");
    const std::string abandoned = target + ".tmp-" + kGoneWriter + "-0";
    const std::string recent = target + ".tmp-" + kGoneWriter + "-1";
    const std::string live = target + ".tmp-" + std::to_string(getpid()) + "-7";
    const std::string other = dir.file("other.cache.tmp-") + kGoneWriter + "-0";
    const std::string unlike = target + ".tmp-notes";
    write_aged(abandoned, 3600);
    write_aged(recent, 0);  // perhaps a writer on another machine sharing the folder
    write_aged(live, 3600);
    write_aged(other, 3600);
    write_aged(unlike, 3600);

    AtomicFile file(target);
    file.write_at(0, "cache", 5);
    file.commit(5);

    EXPECT_FALSE(std::filesystem::exists(abandoned));
    for (const std::string& kept : {recent, live, other, unlike}) {
        EXPECT_TRUE(std::filesystem::exists(kept)) << kept;
    }
    EXPECT_EQ(std::filesystem::file_size(target), 5u);
    EXPECT_EQ(AtomicFile::remove_abandoned(dir.file("other.cache")), 1u);
}

}  // namespace
}  // namespace oomlab
