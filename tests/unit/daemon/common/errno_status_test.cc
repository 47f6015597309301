// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/errno_status.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace rocenet {
namespace {

TEST(ErrnoStatusTest, TheMessageNamesWhatFailedThenTheSystemsReason) {
  EXPECT_EQ(ErrnoMessage(ENOENT, "open /sys/x"), "open /sys/x: No such file or directory");
  EXPECT_EQ(ErrnoMessage(ECONNREFUSED, "connect to 10.0.0.2:50153"),
            "connect to 10.0.0.2:50153: Connection refused");
}

TEST(ErrnoStatusTest, TheStatusCarriesTheSameMessageAndTheMappedCode) {
  const absl::Status status = ErrnoToStatus(ENOENT, "open /sys/x");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), ErrnoMessage(ENOENT, "open /sys/x"));
  EXPECT_EQ(ErrnoToStatus(EROFS, "write").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToStatus(EOPNOTSUPP, "dcb").code(), absl::StatusCode::kUnimplemented);
}

TEST(ErrnoStatusTest, AnUnknownErrnoIsInternalWithTheSystemsWords) {
  const absl::Status status = ErrnoToStatus(4242, "ioctl");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "ioctl: Unknown error 4242");
}

}  // namespace
}  // namespace rocenet
