// PYTORCH_CUDA_ALLOC_CONF read as PyTorch reads it, and refused with the key when it is wrong.
#include <gtest/gtest.h>

#include <string>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/errors.h"

namespace oomlab::allocator {
namespace {

TEST(AllocConf, ReadsEveryKeyThatChangesSegments) {
    const AllocatorSettings settings = parse_alloc_conf(
        "expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6,"
        "roundup_power2_divisions:[256:1,512:2,>:4],pinned_use_cuda_host_register:True");
    EXPECT_TRUE(settings.expandable_segments);
    EXPECT_EQ(settings.max_split_size, 128 << 20);
    EXPECT_DOUBLE_EQ(settings.garbage_collection_threshold, 0.6);
    // Intervals below 256 MiB take the first count, 256 MiB (index 8) 1, 512 MiB 2, then 4.
    EXPECT_EQ(settings.roundup_power2_divisions[0], 1);
    EXPECT_EQ(settings.roundup_power2_divisions[8], 1);
    EXPECT_EQ(settings.roundup_power2_divisions[9], 2);
    EXPECT_EQ(settings.roundup_power2_divisions[10], 4);
    EXPECT_EQ(settings.roundup_power2_divisions[15], 4);
}

// Keys that change what PyTorch allocates but not what the model decides are named, not
// dropped in silence; text that is refused has no such notes.
TEST(AllocConf, SettingsTheModelDoesNotReplayAreNamed) {
    const std::vector<std::string> notes =
        settings_not_replayed("backend:cudaMallocAsync,per_process_memory_fraction:0.5");
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[0].rfind("backend:cudaMallocAsync: ", 0), 0u) << notes[0];
    EXPECT_NE(notes[1].find("per_process_memory_fraction:0.5"), std::string::npos) << notes[1];
    EXPECT_NE(notes[1].find("--device-memory"), std::string::npos) << notes[1];
    EXPECT_TRUE(settings_not_replayed("backend:native,expandable_segments:True").empty());
    EXPECT_TRUE(settings_not_replayed("max_split_size_mb:1,backend:cudaMallocAsync").empty());
}

TEST(AllocConf, WritesBackOnlyWhatDiffersFromTheDefaults) {
    EXPECT_EQ(to_alloc_conf(parse_alloc_conf("")), "");
    EXPECT_EQ(to_alloc_conf(parse_alloc_conf("max_split_size_mb:64,expandable_segments:True")),
              "expandable_segments:True,max_split_size_mb:64");
    EXPECT_EQ(to_alloc_conf(parse_alloc_conf("roundup_power2_divisions:4")),
              "roundup_power2_divisions:4");
    // Any threshold reads back as itself, however many digits it has.
    for (const char* threshold : {"0.6", "1e-7", "0.9999999", "0.123456789"}) {
        const AllocatorSettings gc =
            parse_alloc_conf(std::string("garbage_collection_threshold:") + threshold);
        EXPECT_EQ(parse_alloc_conf(to_alloc_conf(gc)), gc) << threshold;
    }
}

TEST(AllocConf, RefusesWhatPyTorchRefusesNamingTheKey) {
    const auto message = [](const char* conf) {
        try {
            parse_alloc_conf(conf);
        } catch (const BadInput& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message("max_split_size_mb:10").find("max_split_size_mb:10"), std::string::npos);
    EXPECT_NE(message("expandable_segments:maybe").find("True or False"), std::string::npos);
    for (const char* threshold : {"1.5", "nan", "-nan", "inf", "0"}) {
        EXPECT_NE(message((std::string("garbage_collection_threshold:") + threshold).c_str())
                      .find("between 0 and 1"),
                  std::string::npos)
            << threshold;
    }
    EXPECT_NE(message("roundup_power2_divisions:3").find("power of 2"), std::string::npos);
    EXPECT_NE(message("expandable_segment:True").find("unknown key"), std::string::npos);
    EXPECT_NE(message("expandable_segments").find("no value"), std::string::npos);
}

}  // namespace
}  // namespace oomlab::allocator
