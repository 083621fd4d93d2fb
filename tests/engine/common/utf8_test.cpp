#include "oomlab/common/utf8.h"

#include <gtest/gtest.h>

#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

TEST(Utf8, FindsTheFirstByteThatIsNotPartOfAValidSequence) {
    EXPECT_TRUE(is_valid_utf8("plain ascii"));
    EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
    EXPECT_EQ(invalid_utf8_offset("caf\xE9"), 3u);                            // Latin-1 é
    EXPECT_EQ(invalid_utf8_offset("ab\xC0\xAF"), 2u);                         // overlong '/'
    EXPECT_EQ(invalid_utf8_offset("\xED\xA0\x80"), 0u);                       // a surrogate
    EXPECT_EQ(invalid_utf8_offset("x\xF4\x90\x80\x80"), 1u);                  // past U+10FFFF
    EXPECT_EQ(invalid_utf8_offset("ok\xE2\x82"), 2u);                         // cut short
}

TEST(Utf8, RepairReplacesEachBadByteAndKeepsTheRest) {
    EXPECT_EQ(repaired_utf8("caf\xE9 \xFF"), "caf\xEF\xBF\xBD \xEF\xBF\xBD");
    EXPECT_EQ(repaired_utf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");
    EXPECT_EQ(repaired_utf8("ok\xE2\x82"), "ok\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_TRUE(is_valid_utf8(repaired_utf8("\x80\x81\xFE")));
}

TEST(Utf8, RequireNamesTheKeyAndTheByte) {
    EXPECT_NO_THROW(require_utf8("fine", "run.name"));
    try {
        require_utf8("ab\xFF", "run.name", "type it again");
        FAIL() << "accepted bytes that are not UTF-8";
    } catch (const BadInput& error) {
        EXPECT_STREQ(error.what(),
                     "run.name: the value is not valid UTF-8 (byte 3); type it again");
    }
}

TEST(Utf8, ALabelIsOneLineOfText) {
    EXPECT_NO_THROW(require_one_line("bag b32 caf\xC3\xA9", "run name"));
    for (const std::string& bad : {std::string("two\nlines"), std::string("tab\there"),
                                   std::string("\x1b[31mred"), std::string("del\x7f")}) {
        EXPECT_THROW(require_one_line(bad, "run name"), BadInput) << bad;
    }
    try {
        require_one_line("ab\ncd", "--name");
        FAIL();
    } catch (const BadInput& error) {
        EXPECT_STREQ(error.what(),
                     "--name: control character 10 at byte 3 (a line break, tab or escape); it "
                     "must be one line of text");
    }
    EXPECT_THROW(require_one_line("ab\xFF", "--name"), BadInput);  // and valid UTF-8
    EXPECT_EQ(printable_line("a\nb\x1b\xFF"), "a?b?\xEF\xBF\xBD");
    // A right-to-left override makes "exe.txt" of "txt.exe"; C1 controls act as escapes.
    EXPECT_EQ(printable_line("run\u202Etxt.exe"), "run?txt.exe");
    EXPECT_EQ(printable_line("a\u200Fb\u2066c\u2069d\u0085e\u009bf"), "a?b?c?d?e?f");
    EXPECT_EQ(printable_text("one\n\u202Atwo"), "one\n?two");
    // Other text of more than one byte is left as it is.
    EXPECT_EQ(printable_line("caf\u00e9 \u2265 \u2014 \u00a0\u4e2d"),
              "caf\u00e9 \u2265 \u2014 \u00a0\u4e2d");
}

}  // namespace
}  // namespace oomlab
