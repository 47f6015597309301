// SPDX-License-Identifier: Apache-2.0
#include "client/render/table.h"

#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

TEST(TextTableTest, AlignsColumnsToTheWidestCell) {
  TextTable table({"NAME", "STATE", "MTU"});
  table.AddRow({"so1", "up", "8000"});
  table.AddRow({"so10-long", "missing", "-"});
  EXPECT_EQ(table.Render(),
            "NAME        STATE     MTU\n"
            "so1         up        8000\n"
            "so10-long   missing   -\n");
}

TEST(TextTableTest, HeaderOnlyWhenThereAreNoRows) {
  TextTable table({"PORT", "HEALTHY"});
  EXPECT_EQ(table.Render(), "PORT   HEALTHY\n");
}

TEST(TextTableTest, NoTrailingSpacesWhenLastCellsAreEmpty) {
  TextTable table({"A", "B", "C"});
  table.AddRow({"x", "", ""});
  EXPECT_EQ(table.Render(), "A   B   C\nx\n");
}

TEST(TextTableTest, ShortRowsArePaddedAndLongRowsCut) {
  TextTable table({"A", "B"});
  table.AddRow({"1"});
  table.AddRow({"2", "two", "extra"});
  EXPECT_EQ(table.Render(), "A   B\n1\n2   two\n");
}

TEST(TextTableTest, HeadersWithSpacesKeepTheirColumn) {
  TextTable table({"PERM MAC", "DRIVER"});
  table.AddRow({"aa:bb:cc:dd:ee:ff", "habanalabs"});
  EXPECT_EQ(table.Render(),
            "PERM MAC            DRIVER\n"
            "aa:bb:cc:dd:ee:ff   habanalabs\n");
}

TEST(TextTableTest, MultibyteCharactersTakeOneColumn) {
  TextTable table({"NAME", "PORT"});
  table.AddRow({"caf\xC3\xA9-\xEF\xBF\xBD", "1"});
  table.AddRow({"leaf1", "2"});
  EXPECT_EQ(table.Render(),
            "NAME     PORT\n"
            "caf\xC3\xA9-\xEF\xBF\xBD   1\n"
            "leaf1    2\n");
}

TEST(TextTableTest, ControlCharactersCannotBreakARow) {
  TextTable table({"DESCRIPTION", "TTL"});
  table.AddRow({"SONiC\nHwSKU:\tx", "120s"});
  EXPECT_EQ(table.Render(),
            "DESCRIPTION      TTL\n"
            "SONiC HwSKU: x   120s\n");
}

}  // namespace
}  // namespace rocenet::rocectl
