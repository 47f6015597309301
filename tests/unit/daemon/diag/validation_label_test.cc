// SPDX-License-Identifier: Apache-2.0
// The scheduler's validation label: what NFD reads from the file after a
// stage passed, after a higher one passed, after a failure, and past the
// lifetime.
#include "daemon/diag/validation_label.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kPath[] = "/etc/kubernetes/node-feature-discovery/features.d/rocenet-validated";

class ValidationLabelTest : public ::testing::Test {
 protected:
  std::string File() const {
    auto file = fs_.GetFile(kPath);
    return file ? file->content : "<none>";
  }
  ::rocenet::testing::FakeFileSystem fs_;
  ::rocenet::testing::FakeClock clock_;
  ValidationLabel label_{
      &fs_, &clock_,
      ValidationPathFor("/etc/kubernetes/node-feature-discovery/features.d/rocenet")};
};

TEST_F(ValidationLabelTest, APassedStageLabelsTheNodeWithAnExpiry) {
  ASSERT_OK(label_.Record("ethernet", true, "", "n0"));
  const std::string expiry = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", clock_.Now() + kValidatedLifetime, absl::UTCTimeZone());
  EXPECT_THAT(File(), StartsWith("# +expiry-time=" + expiry + "\n"));
  EXPECT_THAT(File(), HasSubstr("\nrocenet.io/scale-out-validated=ethernet\n"));
  EXPECT_THAT(File(), HasSubstr("coordinated by n0"));
}

TEST_F(ValidationLabelTest, TheHighestStageThatPassedIsTheValueAndALowerOneDoesNotLowerIt) {
  ASSERT_OK(label_.Record("rdma", true, "", "n0"));
  clock_.Advance(absl::Hours(1));
  ASSERT_OK(label_.Record("reach", true, "", "n0"));
  EXPECT_THAT(File(), HasSubstr("rocenet.io/scale-out-validated=rdma\n"));
  // Once rdma's validation has expired, reach is what remains.
  clock_.Advance(kValidatedLifetime);
  ASSERT_OK(label_.Record("reach", true, "", "n0"));
  EXPECT_THAT(File(), HasSubstr("rocenet.io/scale-out-validated=reach\n"));
}

TEST_F(ValidationLabelTest, AFailedStageRemovesTheLabelAndNamesTheLink) {
  ASSERT_OK(label_.Record("rdma", true, "", "n0"));
  ASSERT_OK(label_.Record("ethernet", false, "rail 10.201.0.0/16 broken: n1/so0 -> n2/so0", "n0"));
  EXPECT_THAT(File(), Not(HasSubstr("rocenet.io/scale-out-validated=")));
  EXPECT_THAT(File(), HasSubstr("ethernet stage failed"));
  EXPECT_THAT(File(), HasSubstr("n1/so0 -> n2/so0"));
  // No line of it is an NFD directive or a label.
  EXPECT_THAT(File(), StartsWith("# rocenet: "));
  // A pass afterwards labels again, from that stage alone.
  ASSERT_OK(label_.Record("reach", true, "", "n0"));
  EXPECT_THAT(File(), HasSubstr("rocenet.io/scale-out-validated=reach\n"));
}

TEST_F(ValidationLabelTest, AnUnknownStageOrAFailedWriteIsAnErrorNamingTheFile) {
  EXPECT_THAT(
      label_.Record("vibes", true, "", "n0"),
      ::rocenet::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown stage")));
  fs_.FailNextWrite(absl::PermissionDeniedError("read-only file system"));
  EXPECT_THAT(label_.Record("reach", true, "", "n0"),
              ::rocenet::testing::StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(kPath)));
}

}  // namespace
}  // namespace rocenet::diag
