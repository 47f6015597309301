// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/port_selection.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::inventory {
namespace {

TEST(PortSelectionTest, AcceptsNamesAndGlobs) {
  for (const char* pattern : {"so0", "so*", "ens[1-4]f0", "eth?", "a-very-long-nam"}) {
    EXPECT_OK(ValidateInterfacePattern(pattern)) << pattern;
  }
}

TEST(PortSelectionTest, RejectsBadPatternsNamingThem) {
  struct Case {
    const char* pattern;
    const char* reason;
  } cases[] = {
      {"", "is empty"},
      {"so/0", "character"},
      {"so 0", "character"},
      {"so:0", "character"},
      {"ens[1-4", "'[' without ']'"},
      {"ens1]", "']' without '['"},
      {"name-longer-than-15", "longer than 15 bytes"},
      {"..", "not an interface name"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateInterfacePattern(c.pattern);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.pattern;
    EXPECT_NE(status.message().find(c.reason), absl::string_view::npos) << status;
    EXPECT_NE(status.message().find(absl::StrCat("\"", c.pattern, "\"")), absl::string_view::npos)
        << status;
  }
}

TEST(PortSelectionTest, NothingSelectedIsAnError) {
  PortSelection selection;
  selection.gaudi = false;
  EXPECT_FALSE(ValidateSelection(selection).ok());
  selection.interfaces = {"so*"};
  EXPECT_OK(ValidateSelection(selection));
}

TEST(PortSelectionTest, ScaleOutIndexOutOfRange) {
  PortSelection selection;
  selection.gaudi_scale_out_ports = {8, 300};
  absl::Status status = ValidateSelection(selection);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("300"), absl::string_view::npos);
}

TEST(PortSelectionTest, GlobMatching) {
  EXPECT_TRUE(MatchesPattern("so*", "so12"));
  EXPECT_FALSE(MatchesPattern("so*", "eth0"));
  EXPECT_TRUE(MatchesPattern("ens[1-4]f0", "ens3f0"));
  EXPECT_FALSE(MatchesPattern("ens[1-4]f0", "ens5f0"));
  EXPECT_TRUE(IsGlob("so?"));
  EXPECT_FALSE(IsGlob("so0"));
}

}  // namespace
}  // namespace rocenet::inventory
