// SPDX-License-Identifier: Apache-2.0
#include "daemon/outputs/host_outputs.h"

#include "daemon/outputs/renderers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/outputs/host_outputs_fixture.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::outputs {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeFileSystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using namespace fixture;  // NOLINT(build/namespaces): the shared helpers

TEST(HostOutputsTest, UnchangedUpdateWritesAndRemovesNothing) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  const std::vector<PortOutput> ports = {Ready("so0", 0), Ready("so1", 1)};
  ASSERT_OK(outputs.Update(ports));
  // gaudinet.json, two .network files, the NFD file.
  EXPECT_EQ(fs.write_count(), 4);

  ASSERT_OK(outputs.Update(ports));
  ASSERT_OK(outputs.Update(ports));

  EXPECT_EQ(fs.write_count(), 4);
  EXPECT_EQ(fs.remove_count(), 0);
}

TEST(HostOutputsTest, PortLosingProvisioningKeepsGaudinetAndDropsNfdAndItsNetworkFile) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  PortOutput so1 = Ready("so1", 1);
  ASSERT_OK(outputs.Update({Ready("so0", 0), so1}));
  const std::optional<std::string> written = Content(fs, kGaudinet);
  ASSERT_TRUE(written.has_value());
  ASSERT_TRUE(fs.GetFile(kNfd).has_value());

  so1.provisioned = false;
  so1.healthy = false;
  so1.up = true;  // up without an address: the file waits
  ASSERT_OK(outputs.Update({Ready("so0", 0), so1}));

  EXPECT_EQ(Content(fs, kGaudinet), written);
  EXPECT_EQ(fs.WriteCount(kGaudinet), 1);
  EXPECT_FALSE(fs.GetFile(kNfd).has_value());
  EXPECT_TRUE(fs.GetFile(NetworkFile("50-rocenet-so0.network")).has_value());
  EXPECT_FALSE(fs.GetFile(NetworkFile("50-rocenet-so1.network")).has_value());
}

TEST(HostOutputsTest, DiskFullOnGaudinetKeepsOldFileAndStillWritesTheOthers) {
  FakeFileSystem fs;
  fs.AddFile(kGaudinet, "old\n");
  fs.FailNextWrite(absl::ResourceExhaustedError("No space left on device"), kGaudinet);
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());

  const absl::Status status = outputs.Update({Ready("so0", 0)});

  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr(kGaudinet));
  EXPECT_THAT(status.message(), HasSubstr("No space left on device"));
  EXPECT_THAT(Content(fs, kGaudinet), Optional(std::string("old\n")));
  EXPECT_TRUE(fs.GetFile(NetworkFile("50-rocenet-so0.network")).has_value());
  EXPECT_TRUE(fs.GetFile(kNfd).has_value());

  // The next update (the disk has room again) catches up.
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  EXPECT_EQ(Content(fs, kGaudinet), RenderGaudinet(PlanGaudinet({Ready("so0", 0)})));
}

TEST(HostOutputsTest, SeveralFailuresReturnTheFirstWithTheCountOfTheRest) {
  FakeFileSystem fs;
  fs.FailNextWrite(absl::PermissionDeniedError("Read-only file system"), kGaudinet);
  fs.FailNextWrite(absl::PermissionDeniedError("Read-only file system"), kNfd);
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());

  const absl::Status status = outputs.Update({Ready("so0", 0)});

  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(),
            "gaudinet /etc/habanalabs/gaudinet.json: Read-only file system "
            "(and 1 more host output error)");
  EXPECT_TRUE(fs.GetFile(NetworkFile("50-rocenet-so0.network")).has_value());
}

TEST(HostOutputsTest, StaleNetworkFileRemovedForeignFilesUntouched) {
  FakeFileSystem fs;
  fs.AddFile(NetworkFile("50-rocenet-so7.network"), "port that went away\n");
  fs.AddFile(NetworkFile("40-rocenet-so0.network"), "older numbering\n");
  fs.AddFile(NetworkFile("10-netplan-eno1.network"), "[Match]\nName=eno1\n");
  fs.AddFile(NetworkFile("50-rocenet-so0.network.bak"), "admin's copy\n");
  fs.AddFile(NetworkFile("site-rocenet-so0.network"), "admin's own\n");
  OutputConfig config;
  config.networkd_dir = std::string(kNetworkDir) + "/";
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, config);

  ASSERT_OK(outputs.Update({Ready("so0", 0)}));

  absl::StatusOr<std::vector<std::string>> names = fs.ListDirectory(kNetworkDir);
  ASSERT_OK(names);
  EXPECT_THAT(*names, ElementsAre("10-netplan-eno1.network", "50-rocenet-so0.network",
                                  "50-rocenet-so0.network.bak", "site-rocenet-so0.network"));
  EXPECT_EQ(Content(fs, NetworkFile("50-rocenet-so0.network")),
            RenderNetworkdFile(Ready("so0", 0)));
  EXPECT_EQ(fs.remove_count(), 2);
}

TEST(HostOutputsTest, NetworkFileFollowsPortChangesAndL2Ports) {
  FakeFileSystem fs;
  OutputConfig config;
  config.networkd_dir = kNetworkDir;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, config);
  PortOutput so0 = Ready("so0", 0);
  PortOutput so1 = Ready("so1", 1);
  so1.l3 = false;
  ASSERT_OK(outputs.Update({so0, so1}));
  EXPECT_EQ(Content(fs, NetworkFile("50-rocenet-so1.network")), RenderNetworkdFile(so1));

  so0.mtu = 9000;
  ASSERT_OK(outputs.Update({so0, so1}));

  EXPECT_THAT(Content(fs, NetworkFile("50-rocenet-so0.network")),
              Optional(HasSubstr("MTUBytes=9000\n")));
  EXPECT_EQ(fs.WriteCount(NetworkFile("50-rocenet-so0.network")), 2);
  EXPECT_EQ(fs.WriteCount(NetworkFile("50-rocenet-so1.network")), 1);
}

TEST(HostOutputsTest, InterfaceNameThatIsNotOneIsRejected) {
  FakeFileSystem fs;
  OutputConfig config;
  config.gaudinet_path = "";
  config.networkd_dir = kNetworkDir;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, config);

  const absl::Status status = outputs.Update({Ready("../../x", 0), Ready("so0", 0)});

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"../../x\""));
  EXPECT_EQ(fs.write_count(), 1);
  EXPECT_TRUE(fs.GetFile(NetworkFile("50-rocenet-so0.network")).has_value());
}

TEST(HostOutputsTest, NfdFileOnlyWhileEveryPortIsReady) {
  FakeFileSystem fs;
  OutputConfig config;
  config.nfd_features_path = kNfd;
  config.nfd_label = "example.com/roce-ready";
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, config);

  ASSERT_OK(outputs.Update({}));
  EXPECT_FALSE(fs.GetFile(kNfd).has_value());

  ASSERT_OK(outputs.Update({Ready("so0", 0), Ready("so1", 1)}));
  EXPECT_THAT(Content(fs, kNfd), Optional(HasSubstr("\nexample.com/roce-ready=true\n"
                                                    "example.com/scale-out-ports=2\n")));

  PortOutput sick = Ready("so1", 1);
  sick.healthy = false;
  ASSERT_OK(outputs.Update({Ready("so0", 0), sick}));
  EXPECT_FALSE(fs.GetFile(kNfd).has_value());

  ASSERT_OK(outputs.Update({Ready("so0", 0), Ready("so1", 1)}));
  EXPECT_TRUE(fs.GetFile(kNfd).has_value());
  EXPECT_EQ(fs.WriteCount(kNfd), 2);
}

TEST(HostOutputsTest, FailedNfdRemovalNamesTheFile) {
  FakeFileSystem fs;
  fs.AddFile(kNfd, "rocenet.io/scale-out-ready=true\n");
  fs.FailNextRemove(absl::PermissionDeniedError("remove: Read-only file system"));
  OutputConfig config;
  config.nfd_features_path = kNfd;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, config);

  const absl::Status status = outputs.Update({});

  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr(kNfd));
}

TEST(HostOutputsTest, HandEditedFileIsRepaired) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  fs.AddFile(kGaudinet, "{}\n");

  ASSERT_OK(outputs.Update({Ready("so0", 0)}));

  EXPECT_EQ(Content(fs, kGaudinet), RenderGaudinet(PlanGaudinet({Ready("so0", 0)})));
}

TEST(HostOutputsTest, DisabledOutputsTouchNothing) {
  FakeFileSystem fs;
  fs.AddFile(kNfd, "stale\n");
  fs.AddFile(NetworkFile("50-rocenet-so9.network"), "stale\n");
  FakeClock clock;
  OutputConfig off;
  off.gaudinet_path = "";  // the only output on by default
  HostOutputs outputs(&fs, &clock, off);

  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  ASSERT_OK(outputs.Update({}));

  EXPECT_EQ(fs.write_count(), 0);
  EXPECT_EQ(fs.remove_count(), 0);
}

TEST(HostOutputsTest, TheNfdFileExpiresAndIsRefreshedWhileRocenetdRuns) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  // 1'800'000'000 is 2027-01-15T08:00:00Z; the default lifetime is 10 minutes.
  EXPECT_THAT(Content(fs, kNfd),
              Optional(::testing::StartsWith("# +expiry-time=2027-01-15T08:10:00Z\n")));
  EXPECT_THAT(Content(fs, kNfd), Optional(HasSubstr("\nrocenet.io/scale-out-ready=true\n")));

  // Nothing new, and less than half the lifetime gone: not rewritten.
  clock.Advance(absl::Minutes(4));
  ASSERT_OK(outputs.RefreshExpiry());
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  EXPECT_EQ(fs.WriteCount(kNfd), 1);

  clock.Advance(absl::Minutes(1));
  ASSERT_OK(outputs.RefreshExpiry());
  EXPECT_EQ(fs.WriteCount(kNfd), 2);
  EXPECT_THAT(Content(fs, kNfd),
              Optional(::testing::StartsWith("# +expiry-time=2027-01-15T08:15:00Z\n")));

  // Removed behind its back: put back at the next refresh.
  ASSERT_OK(fs.RemoveFile(kNfd));
  ASSERT_OK(outputs.RefreshExpiry());
  EXPECT_TRUE(fs.GetFile(kNfd).has_value());
}

// The renewal keeps time, not the wall clock: set back an hour, it still
// comes 5 minutes after the last (the expiry then written is 10 minutes
// ahead of the wall clock nfd-worker compares it with); set forwards an
// hour, it is not due at once.
TEST(HostOutputsTest, TheNfdRenewalKeepsItsPaceWhenTheWallClockIsSet) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  clock.StepWall(absl::Hours(-1));
  clock.Advance(absl::Minutes(5));
  ASSERT_OK(outputs.RefreshExpiry());
  EXPECT_EQ(fs.WriteCount(kNfd), 2);
  EXPECT_THAT(Content(fs, kNfd),
              Optional(::testing::StartsWith("# +expiry-time=2027-01-15T07:15:00Z\n")));
  clock.StepWall(absl::Hours(1));
  clock.Advance(absl::Minutes(1));
  ASSERT_OK(outputs.RefreshExpiry());
  EXPECT_EQ(fs.WriteCount(kNfd), 2) << "one minute after the last renewal";
}

TEST(HostOutputsTest, AFailedRefreshNamesTheFileOnce) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  clock.Advance(absl::Minutes(6));
  fs.FailNextWrite(absl::PermissionDeniedError("Read-only file system"), kNfd);
  const absl::Status status = outputs.Update({Ready("so0", 0)});
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  const std::string message(status.message());
  EXPECT_EQ(message.find(kNfd), message.rfind(kNfd)) << message;
  EXPECT_THAT(message, HasSubstr("Read-only file system"));
  fs.FailNextWrite(absl::PermissionDeniedError("Read-only file system"), kNfd);
  const absl::Status refresh = outputs.RefreshExpiry();
  EXPECT_EQ(std::string(refresh.message()).find(kNfd), std::string(refresh.message()).rfind(kNfd));
}

TEST(HostOutputsTest, WithdrawRemovesTheNfdFileAndNothingElse) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  ASSERT_OK(outputs.Update({Ready("so0", 0)}));
  ASSERT_OK(outputs.Withdraw());
  EXPECT_FALSE(fs.GetFile(kNfd).has_value());
  EXPECT_TRUE(fs.GetFile(kGaudinet).has_value());
  // A refresh after a withdrawal writes nothing back.
  clock.Advance(absl::Minutes(9));
  ASSERT_OK(outputs.RefreshExpiry());
  EXPECT_FALSE(fs.GetFile(kNfd).has_value());
  ASSERT_OK(outputs.Withdraw());  // twice is fine
}

}  // namespace
}  // namespace rocenet::outputs
