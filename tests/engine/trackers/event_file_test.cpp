#include "trackers/event_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "test_support.h"

namespace oomlab::trackers {
namespace {

TEST(Crc32c, MatchesTheStandardCheckValues) {
    EXPECT_EQ(crc32c("123456789"), 0xE3069283u);  // RFC 3720's check value
    EXPECT_EQ(crc32c(""), 0u);
    EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720, B.4: 32 zero bytes
}

TEST(ProtoMessage, EncodesTheWireFormat) {
    ProtoMessage message;
    message.varint(1, 150).bytes(2, "testing");
    // The protocol buffers documentation's own examples: field 1 = 150, field 2 = "testing".
    EXPECT_EQ(message.serialized(), std::string("\x08\x96\x01\x12\x07testing", 12));
    ProtoMessage number;
    number.float32(2, 1.5f);
    EXPECT_EQ(number.serialized(), std::string("\x15\x00\x00\xc0\x3f", 5));
}

TEST(EventFile, FramesEachRecordWithItsLengthAndChecksums) {
    const test::TempDir dir;
    const std::string path = dir.file("events.out.tfevents.1");
    {
        EventFile file(path, 1000.0);
        file.add(1001.0, 7, summary_of(scalar_value("train/loss", 0.5f)));
        EXPECT_FALSE(std::filesystem::exists(path));  // in place only once committed
        file.commit();
    }
    const std::string bytes = test::read_text(path);
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data(), 8);
    const std::string event = bytes.substr(12, length);
    EXPECT_NE(event.find("brain.Event:2"), std::string::npos);
    std::uint32_t stored = 0;
    std::memcpy(&stored, bytes.data() + 12 + length, 4);
    const std::uint32_t crc = crc32c(event);
    EXPECT_EQ(stored, ((crc >> 15) | (crc << 17)) + 0xa282ead8u);

    // The second record: the scalar, whole, and nothing after it.
    const std::size_t second = 8 + 4 + length + 4;
    std::uint64_t second_length = 0;
    std::memcpy(&second_length, bytes.data() + second, 8);
    EXPECT_EQ(bytes.size(), second + 8 + 4 + second_length + 4);
    EXPECT_NE(bytes.substr(second + 12, second_length).find("train/loss"), std::string::npos);
}

TEST(EventFile, AFileNeverCommittedLeavesNothing) {
    const test::TempDir dir;
    const std::string path = dir.file("events.out.tfevents.2");
    { EventFile file(path, 1000.0); }
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace oomlab::trackers
