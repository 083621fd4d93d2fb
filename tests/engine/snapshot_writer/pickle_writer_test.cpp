// The pickle writer: exact opcodes for each kind of value, and Python reading what it wrote.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "snapshot_writer/pickle_writer.h"
#include "test_support.h"

namespace oomlab::memory {
namespace {

std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (int value : values) {
        out.push_back(static_cast<char>(value));
    }
    return out;
}

TEST(PickleWriter, WritesProtocolTwoOpcodesForEachValue) {
    PickleWriter out;
    out.begin_dict();
    out.key("a");
    out.value(std::int64_t{-2});
    out.key("b");
    out.begin_list();
    out.value(true);
    out.value(std::int64_t{1} << 40);
    out.end_list();
    out.end_dict();
    const std::string expected = bytes({0x80, 0x02, '}', '('}) + bytes({'X', 1, 0, 0, 0, 'a'}) +
                                 bytes({'J', 0xfe, 0xff, 0xff, 0xff}) +
                                 bytes({'X', 1, 0, 0, 0, 'b'}) + bytes({']', '(', 0x88}) +
                                 bytes({0x8a, 8, 0, 0, 0, 0, 0, 1, 0, 0}) + bytes({'e', 'u', '.'});
    EXPECT_EQ(out.finish(), expected);
}

TEST(PickleWriter, RefusesUnbalancedContainers) {
    PickleWriter unended;
    unended.begin_list();
    EXPECT_THROW(unended.finish(), std::logic_error);
    PickleWriter mismatched;
    mismatched.begin_dict();
    EXPECT_THROW(mismatched.end_list(), std::logic_error);
}

TEST(PickleWriter, PythonLoadsEveryKindOfValue) {
    PickleWriter out;
    out.begin_dict();
    out.key("small");
    out.value(std::int64_t{7});
    out.key("negative large");
    out.value(std::int64_t{-140737488355328});
    out.key("largest");
    out.value(std::int64_t{INT64_MAX});
    out.key("real");
    out.value(0.1);
    out.key("flags");
    out.begin_list();
    out.value(true);
    out.value(false);
    out.end_list();
    out.key("text");
    out.value("caf\xc3\xa9 \xe2\x86\x92 memory");
    out.key("empty");
    out.begin_dict();
    out.end_dict();
    out.end_dict();
    test::TempDir dir;
    test::write_file(dir.file("values.pickle"), out.finish());
    const auto loaded = test::pickle_as_json(dir.file("values.pickle"));
    if (!loaded) {
        GTEST_SKIP() << "no python3 to read the pickle with";
    }
    const auto json = nlohmann::json::parse(*loaded);
    EXPECT_EQ(json["small"], 7);
    EXPECT_EQ(json["negative large"].get<std::int64_t>(), -140737488355328);
    EXPECT_EQ(json["largest"].get<std::int64_t>(), INT64_MAX);
    EXPECT_EQ(json["real"].get<double>(), 0.1);
    EXPECT_EQ(json["flags"], nlohmann::json::array({true, false}));
    EXPECT_EQ(json["text"], "caf\xc3\xa9 \xe2\x86\x92 memory");
    EXPECT_TRUE(json["empty"].is_object() && json["empty"].empty());
}

}  // namespace
}  // namespace oomlab::memory
