// SPDX-License-Identifier: Apache-2.0
// Matchers for absl::Status and absl::StatusOr in tests: a failure prints
// the status (code and message), where ASSERT_TRUE(s.ok()) prints "false".
//
//   ASSERT_OK(ParseThing(text));
//   EXPECT_THAT(Load(path), StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
//   EXPECT_THAT(Parse("3"), IsOkAndHolds(3));
#pragma once

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace rocenet::testing {
namespace internal {

inline const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// What a value that is not OK says about itself: an absl status, a
// grpc::Status's message, or nothing for other types with ok().
template <typename T>
void ExplainNotOk(const T& value, ::testing::MatchResultListener* listener) {
  if constexpr (requires { StatusOf(value); }) {
    *listener << "which is " << StatusOf(value);
  } else if constexpr (requires { value.error_message(); }) {
    *listener << "which failed: " << value.error_message();
  } else if constexpr (requires { value.ToString(); }) {
    *listener << "which is " << value.ToString();
  }
}

class IsOkMatcher {
 public:
  using is_gtest_matcher = void;
  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const bool ok = value.ok();
    if (!ok) ExplainNotOk(value, listener);
    return ok;
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

template <typename MessageMatcher>
class StatusIsMatcher {
 public:
  using is_gtest_matcher = void;
  StatusIsMatcher(absl::StatusCode code, MessageMatcher message)
      : code_(code), message_(std::move(message)) {}
  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = StatusOf(value);
    *listener << "which is " << status;
    return status.code() == code_ &&
           ::testing::Matcher<const std::string&>(message_).Matches(std::string(status.message()));
  }
  void DescribeTo(std::ostream* os) const {
    *os << "has code " << absl::StatusCodeToString(code_) << " and a message that ";
    ::testing::Matcher<const std::string&>(message_).DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have code " << absl::StatusCodeToString(code_) << " or a message that ";
    ::testing::Matcher<const std::string&>(message_).DescribeTo(os);
  }

 private:
  absl::StatusCode code_;
  MessageMatcher message_;
};

template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  using is_gtest_matcher = void;
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}
  template <typename T>
  bool MatchAndExplain(const absl::StatusOr<T>& value,
                       ::testing::MatchResultListener* listener) const {
    if (!value.ok()) {
      *listener << "which is " << value.status();
      return false;
    }
    return ::testing::ExplainMatchResult(inner_, *value, listener);
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK and holds a value that matches"; }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "is not OK or holds a value that does not match";
  }

 private:
  InnerMatcher inner_;
};

}  // namespace internal

// A Status or StatusOr (or a grpc::Status, or anything with ok()) that is OK.
inline internal::IsOkMatcher IsOk() { return {}; }

// A Status or StatusOr with `code` (and a message matching `message`).
template <typename MessageMatcher>
internal::StatusIsMatcher<MessageMatcher> StatusIs(absl::StatusCode code, MessageMatcher message) {
  return {code, std::move(message)};
}
inline auto StatusIs(absl::StatusCode code) { return StatusIs(code, ::testing::_); }

// A StatusOr that is OK with a value matching `inner`.
template <typename InnerMatcher>
internal::IsOkAndHoldsMatcher<InnerMatcher> IsOkAndHolds(InnerMatcher inner) {
  return internal::IsOkAndHoldsMatcher<InnerMatcher>(std::move(inner));
}

}  // namespace rocenet::testing

#define ASSERT_OK(expression) ASSERT_THAT((expression), ::rocenet::testing::IsOk())
#define EXPECT_OK(expression) EXPECT_THAT((expression), ::rocenet::testing::IsOk())

// ASSERT_OK_AND_ASSIGN(auto x, MakeX()): fails the test with the status
// when MakeX() is not OK, else moves its value into x.
#define ROCENET_STATUS_CONCAT_INNER(a, b) a##b
#define ROCENET_STATUS_CONCAT(a, b) ROCENET_STATUS_CONCAT_INNER(a, b)
#define ROCENET_ASSERT_OK_AND_ASSIGN(statusor, lhs, expression) \
  auto statusor = (expression);                                 \
  ASSERT_OK(statusor.status());                                 \
  lhs = std::move(*statusor)
#define ASSERT_OK_AND_ASSIGN(lhs, expression) \
  ROCENET_ASSERT_OK_AND_ASSIGN(ROCENET_STATUS_CONCAT(status_or_, __LINE__), lhs, expression)
