// SPDX-License-Identifier: Apache-2.0
// The real ib_write_bw (Debian's perftest) run through ProcessRunnerLinux
// for an RDMA device that does not exist: the parser must turn what the
// tool printed into a clear error in the tool's own words. SKIPPED when
// perftest is not installed.
#include <string>

#include "daemon/diag/rdma_bench.h"
#include "daemon/os/linux/process_linux.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

TEST(RdmaBenchRealTest, IbWriteBwWithAMissingDeviceFailsInItsOwnWords) {
  os::ProcessRunnerLinux runner;
  RdmaBenchSpec spec;
  spec.device = "rocenet_missing0";
  spec.gid_index = 3;
  spec.tcp_port = 18515;  // never bound: the tool stops at the device
  spec.server = Ipv4Address(0x7f000001);
  absl::StatusOr<std::string> path = runner.Find(RdmaProgram(spec));
  if (!path.ok()) GTEST_SKIP() << "perftest is not installed: " << path.status();
  absl::StatusOr<std::vector<std::string>> argv = RdmaBenchArgv(*path, spec);
  ASSERT_OK(argv);
  absl::StatusOr<std::unique_ptr<os::Process>> process = runner.Start(*argv);
  ASSERT_OK(process);
  os::ProcessResult result = (*process)->Wait(absl::Now() + absl::Seconds(30));
  ASSERT_FALSE(result.timed_out);
  EXPECT_NE(result.exit_code, 0);

  absl::Status parsed = ParseRdmaBenchOutput(spec.tool, spec.test, result.out, result.err).status();
  EXPECT_EQ(parsed.code(), absl::StatusCode::kNotFound) << parsed;
  EXPECT_THAT(parsed.message(), HasSubstr("ib_write_bw: no result; it said: "));
  // With no RDMA device at all (this machine) perftest says it found none;
  // with other devices present it names the missing one.
  EXPECT_THAT(parsed.message(), AnyOf(HasSubstr("Did not detect devices"),
                                      HasSubstr("IB device rocenet_missing0 not found")));
}

}  // namespace
}  // namespace rocenet::diag
