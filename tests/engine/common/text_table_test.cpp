// Terminal tables: columns sized to their widest cell, whatever its length.
#include "oomlab/common/text_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace oomlab {
namespace {

std::string printed(const TextTable& table) {
    std::ostringstream out;
    table.print(out);
    return out.str();
}

TEST(TextTable, EachColumnIsAsWideAsItsWidestCell) {
    TextTable table({"name", "title"});
    table.add_row({"sharding-the-optimizer-state", "Sharding the optimizer state"});
    table.add_row({"batch-size", "Batch size"});
    EXPECT_EQ(printed(table),
              "name                          title\n"
              "sharding-the-optimizer-state  Sharding the optimizer state\n"
              "batch-size                    Batch size\n");
}

TEST(TextTable, FiguresAlignRightAndNoLineEndsInSpaces) {
    TextTable table({"run", "peak", "note"}, {1}, "  ");
    table.add_row({"a", "1.00 GiB", ""});
    table.add_row({"bb", "12 B", "fits"});
    EXPECT_EQ(printed(table),
              "  run      peak  note\n"
              "  a    1.00 GiB\n"
              "  bb       12 B  fits\n");
}

TEST(TextTable, WidthCountsCharactersNotBytes) {
    EXPECT_EQ(display_width("×1.6 — µs"), 9U);
    TextTable table({"", ""});  // no header line
    table.add_row({"µ", "x"});
    table.add_row({"ab", "y"});
    EXPECT_EQ(printed(table), "µ   x\nab  y\n");
}

TEST(TextTable, ALineOfItsOwnKeepsTheColumnsOfTheRowsAroundIt) {
    TextTable table({"", ""}, {1});
    table.add_row({"run 1", "10 MiB"});
    table.add_line("    a note far wider than any column of the table");
    table.add_row({"run 12345", "1 B"});
    EXPECT_EQ(printed(table),
              "run 1      10 MiB\n"
              "    a note far wider than any column of the table\n"
              "run 12345     1 B\n");
}

}  // namespace
}  // namespace oomlab
