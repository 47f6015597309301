// SPDX-License-Identifier: Apache-2.0
// The error object and the mapping from rocenetd's gRPC codes to CNI codes.
#include "plugins/cni/errors.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rocenet::cni {
namespace {

TEST(ErrorJsonTest, HasTheSpecsFourKeys) {
  const absl::Status status =
      CniError(CniCode::kInvalidNetworkConfig, "mtu: must be an integer", "more");
  EXPECT_EQ(ErrorJson("1.0.0", status).dump(),
            R"({"cniVersion":"1.0.0","code":7,"msg":"mtu: must be an integer","details":"more"})");
}

TEST(ErrorJsonTest, DetailsAreAlwaysPresent) {
  EXPECT_EQ(ErrorJson("0.4.0", CniError(CniCode::kTryAgainLater, "x")).dump(),
            R"({"cniVersion":"0.4.0","code":11,"msg":"x","details":""})");
}

TEST(ErrorJsonTest, AStatusWithoutACodeIs999) {
  EXPECT_EQ(CniCodeOf(absl::InternalError("boom")), CniCode::kInternal);
  EXPECT_EQ(ErrorJson("1.1.0", absl::InternalError("boom"))["code"], 999);
}

struct MappingCase {
  DaemonCall call;
  absl::StatusCode code;
  std::string message;
  CniCode expected;
};

TEST(DaemonErrorTest, MapsEachCallAndCode) {
  const std::vector<MappingCase> cases = {
      {DaemonCall::kAttach, absl::StatusCode::kUnavailable, "cannot reach",
       CniCode::kTryAgainLater},
      {DaemonCall::kDetach, absl::StatusCode::kUnavailable, "cannot reach",
       CniCode::kTryAgainLater},
      {DaemonCall::kAttach, absl::StatusCode::kDeadlineExceeded, "slow", CniCode::kTryAgainLater},
      {DaemonCall::kGc, absl::StatusCode::kDeadlineExceeded, "slow", CniCode::kTryAgainLater},
      {DaemonCall::kAttach, absl::StatusCode::kAborted, "conflict", CniCode::kTryAgainLater},
      {DaemonCall::kAttach, absl::StatusCode::kInvalidArgument,
       "netns /tmp/x: not under /var/run/netns", CniCode::kInvalidEnvironment},
      {DaemonCall::kAttach, absl::StatusCode::kInvalidArgument, "ifname net1: exists in the pod",
       CniCode::kInvalidEnvironment},
      {DaemonCall::kAttach, absl::StatusCode::kInvalidArgument,
       "mtu 9500: above port so0's maximum 9000", CniCode::kInvalidNetworkConfig},
      {DaemonCall::kAttach, absl::StatusCode::kInvalidArgument, "mode: L4 unknown",
       CniCode::kInvalidNetworkConfig},
      {DaemonCall::kAttach, absl::StatusCode::kInvalidArgument, "deviceID x: malformed",
       CniCode::kInvalidNetworkConfig},
      {DaemonCall::kAttach, absl::StatusCode::kNotFound, "deviceID x: no such port",
       CniCode::kInvalidNetworkConfig},
      {DaemonCall::kCheck, absl::StatusCode::kNotFound, "no attachment c1/net1",
       CniCode::kInternal},
      {DaemonCall::kAttach, absl::StatusCode::kFailedPrecondition, "port so0: not provisioned",
       CniCode::kTryAgainLater},
      {DaemonCall::kAttach, absl::StatusCode::kResourceExhausted, "no free port",
       CniCode::kTryAgainLater},
      {DaemonCall::kDetach, absl::StatusCode::kFailedPrecondition, "port so0: busy",
       CniCode::kTryAgainLater},
      {DaemonCall::kCheck, absl::StatusCode::kFailedPrecondition, "net1: MTU 1500, recorded 8000",
       CniCode::kInternal},
      {DaemonCall::kAttach, absl::StatusCode::kAlreadyExists, "c1 already has net1",
       CniCode::kInternal},
      {DaemonCall::kAttach, absl::StatusCode::kPermissionDenied, "uid 1000", CniCode::kInternal},
      {DaemonCall::kAttach, absl::StatusCode::kInternal, "netlink: EBUSY", CniCode::kInternal},
      {DaemonCall::kList, absl::StatusCode::kUnavailable, "cannot reach",
       CniCode::kPluginNotAvailable},
      {DaemonCall::kList, absl::StatusCode::kInternal, "broken", CniCode::kPluginNotAvailable},
  };
  for (const MappingCase& c : cases) {
    const absl::Status mapped = DaemonError(c.call, absl::Status(c.code, c.message));
    EXPECT_EQ(CniCodeOf(mapped), c.expected) << c.message;
    EXPECT_EQ(mapped.message(), c.message);
  }
}

TEST(DaemonErrorTest, UnimplementedSaysTheDaemonIsOlder) {
  const absl::Status mapped =
      DaemonError(DaemonCall::kGc, absl::UnimplementedError("unknown method Gc"));
  EXPECT_EQ(CniCodeOf(mapped), CniCode::kInternal);
  EXPECT_EQ(mapped.message(),
            "rocenetd does not serve rocenet.v1.Attachments/Gc (is it older than the rocenet "
            "plugin?)");
}

TEST(DaemonErrorTest, DetailsNameTheCallAndTheCode) {
  const absl::Status mapped =
      DaemonError(DaemonCall::kAttach, absl::ResourceExhaustedError("no free port"));
  EXPECT_EQ(ErrorJson("1.0.0", mapped)["details"],
            "rocenet.v1.Attachments/Attach failed: RESOURCE_EXHAUSTED");
}

}  // namespace
}  // namespace rocenet::cni
