// SPDX-License-Identifier: Apache-2.0
#include "client/options.h"

#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::rocectl {
namespace {

TEST(ParseOutputFormatTest, KnownNamesRoundTrip) {
  for (OutputFormat format :
       {OutputFormat::kTable, OutputFormat::kWide, OutputFormat::kJson, OutputFormat::kYaml}) {
    auto parsed = ParseOutputFormat(OutputFormatName(format));
    ASSERT_OK(parsed);
    EXPECT_EQ(*parsed, format);
  }
  EXPECT_FALSE(ParseOutputFormat("JSON").ok());
}

TEST(ParseOutputFormatTest, UnknownNameListsTheChoices) {
  EXPECT_EQ(ParseOutputFormat("xml").status().message(),
            "unknown output format \"xml\"; want table, wide, json or yaml");
}

}  // namespace
}  // namespace rocenet::rocectl
