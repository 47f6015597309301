// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/support/status_matchers.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/unit/support/temp_dir.h"

namespace rocenet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Explain(const auto& matcher, const auto& value) {
  ::testing::StringMatchResultListener listener;
  ::testing::ExplainMatchResult(matcher, value, &listener);
  return listener.str();
}

TEST(StatusMatchersTest, IsOkSaysWhatTheStatusWas) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(3), IsOk());
  const absl::Status refused = absl::InvalidArgumentError("port so0: no");
  EXPECT_THAT(refused, Not(IsOk()));
  EXPECT_THAT(Explain(IsOk(), refused), HasSubstr("INVALID_ARGUMENT: port so0: no"));
  EXPECT_THAT(Explain(IsOk(), absl::StatusOr<int>(refused)), HasSubstr("port so0: no"));
}

TEST(StatusMatchersTest, StatusIsMatchesCodeAndMessage) {
  const absl::Status missing = absl::NotFoundError("device so9: gone");
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound, HasSubstr("so9")));
  EXPECT_THAT(missing, Not(StatusIs(absl::StatusCode::kNotFound, HasSubstr("so1"))));
  EXPECT_THAT(missing, Not(StatusIs(absl::StatusCode::kInternal)));
  EXPECT_THAT(absl::StatusOr<int>(missing), StatusIs(absl::StatusCode::kNotFound));
}

TEST(StatusMatchersTest, IsOkAndHoldsLooksInside) {
  EXPECT_THAT(absl::StatusOr<int>(3), IsOkAndHolds(3));
  EXPECT_THAT(absl::StatusOr<int>(4), Not(IsOkAndHolds(3)));
  EXPECT_THAT(absl::StatusOr<int>(absl::UnknownError("x")), Not(IsOkAndHolds(3)));
}

TEST(TempDirTest, EachIsItsOwnAndGoesWithEverythingInIt) {
  std::string kept;
  {
    TempDir a;
    TempDir b;
    EXPECT_NE(a.path(), b.path());
    ASSERT_TRUE(std::filesystem::is_directory(a.path()));
    std::filesystem::create_directories(a.Join("x/y"));
    kept = a.path();
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace rocenet::testing
