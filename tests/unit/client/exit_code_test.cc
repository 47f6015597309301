// SPDX-License-Identifier: Apache-2.0
#include "client/exit_code.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;

TEST(ExitCodeForTest, DocumentedCodes) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeFor(absl::UnknownError("x")), 1);
  EXPECT_EQ(ExitCodeFor(absl::InternalError("x")), 1);
  EXPECT_EQ(ExitCodeFor(absl::PermissionDeniedError("x")), 3);
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("x")), 2);
  EXPECT_EQ(ExitCodeFor(absl::UnavailableError("x")), 3);
  EXPECT_EQ(ExitCodeFor(absl::DeadlineExceededError("x")), 3);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("x")), 4);
}

TEST(ExitCodeHelpTest, ListsEveryCode) {
  const std::string help(ExitCodeHelp());
  for (const char* line : {"  0  ", "  1  ", "  2  ", "  3  ", "  4  "}) {
    EXPECT_THAT(help, HasSubstr(line));
  }
}

}  // namespace
}  // namespace rocenet::rocectl
