#include "trackers/event_file.h"

#include <gtest/gtest.h>

#include <cstring>

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
    EventFile file(1000.0);
    const std::string& bytes = file.bytes();
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data(), 8);
    ASSERT_EQ(bytes.size(), 8 + 4 + length + 4);
    const std::string event = bytes.substr(12, length);
    EXPECT_NE(event.find("brain.Event:2"), std::string::npos);
    std::uint32_t stored = 0;
    std::memcpy(&stored, bytes.data() + 12 + length, 4);
    const std::uint32_t crc = crc32c(event);
    EXPECT_EQ(stored, ((crc >> 15) | (crc << 17)) + 0xa282ead8u);

    file.add(1001.0, 7, summary_of(scalar_value("train/loss", 0.5f)));
    EXPECT_GT(file.bytes().size(), 8 + 4 + length + 4 + 16);
}

}  // namespace
}  // namespace oomlab::trackers
