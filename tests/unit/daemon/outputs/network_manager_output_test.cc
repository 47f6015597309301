// SPDX-License-Identifier: Apache-2.0
#include "daemon/outputs/network_manager_output.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/outputs/host_outputs.h"
#include "daemon/outputs/renderers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_network_manager.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::outputs {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeNetworkManager;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDropIn[] = "/etc/NetworkManager/conf.d/90-rocenet.conf";

std::vector<PortOutput> Ports(const std::vector<std::string>& names) {
  std::vector<PortOutput> ports;
  for (const std::string& name : names) {
    PortOutput port;
    port.name = name;
    ports.push_back(port);
  }
  return ports;
}

std::optional<std::string> Content(const FakeFileSystem& fs) {
  std::optional<FakeFileSystem::File> file = fs.GetFile(kDropIn);
  if (!file.has_value()) return std::nullopt;
  return file->content;
}

struct Fixture {
  FakeFileSystem fs;
  FakeNetworkManager nm;
  NetworkManagerOutput output{&fs, &nm, kDropIn};

  std::vector<absl::Status> Update(const std::vector<std::string>& names) {
    std::vector<absl::Status> errors;
    output.Update(Ports(names), errors);
    return errors;
  }
};

TEST(NetworkManagerOutputTest, WritesTheDropInAndTakesEveryManagedPortFromNetworkManager) {
  Fixture f;
  f.nm.devices = {{"so0", true}, {"so1", false}, {"eth0", true}};
  EXPECT_THAT(f.Update({"so1", "so0", "so2"}), IsEmpty());
  EXPECT_EQ(Content(f.fs), RenderNetworkManagerDropIn({"so0", "so1", "so2"}));
  EXPECT_EQ(f.fs.GetFile(kDropIn)->mode, 0644u);
  // Reloaded first, so a port that appears from now on comes up unmanaged;
  // then each port it has is asked about, and only so0 needed setting.
  // so2 has no device yet; eth0 is not rocenet's.
  EXPECT_THAT(f.nm.calls, ElementsAre("reload", "is-managed so0", "set-unmanaged so0",
                                      "is-managed so1", "is-managed so2"));
  EXPECT_FALSE(f.nm.devices["so0"]);
  EXPECT_TRUE(f.nm.devices["eth0"]);
}

TEST(NetworkManagerOutputTest, TellsNetworkManagerOnlyWhenThePortsChange) {
  Fixture f;
  f.nm.devices = {{"so0", true}, {"so1", true}};
  ASSERT_THAT(f.Update({"so0", "so1"}), IsEmpty());
  const int writes = f.fs.WriteCount(kDropIn);
  f.nm.calls.clear();
  // Someone sets so0 managed again: not watched; the next change of the
  // ports puts it right.
  f.nm.devices["so0"] = true;
  EXPECT_THAT(f.Update({"so1", "so0"}), IsEmpty());
  EXPECT_THAT(f.nm.calls, IsEmpty());
  EXPECT_EQ(f.fs.WriteCount(kDropIn), writes);

  f.nm.devices["so2"] = true;
  EXPECT_THAT(f.Update({"so0", "so1", "so2"}), IsEmpty());
  EXPECT_EQ(Content(f.fs), RenderNetworkManagerDropIn({"so0", "so1", "so2"}));
  EXPECT_EQ(f.nm.reloads, 2);
  EXPECT_FALSE(f.nm.devices["so0"]);
  EXPECT_FALSE(f.nm.devices["so2"]);
}

TEST(NetworkManagerOutputTest, AfterARestartAnUnchangedFileIsNotRewrittenButNetworkManagerIsTold) {
  Fixture f;
  f.fs.AddFile(kDropIn, RenderNetworkManagerDropIn({"so0"}));
  f.nm.devices = {{"so0", true}};
  EXPECT_THAT(f.Update({"so0"}), IsEmpty());
  EXPECT_EQ(f.fs.WriteCount(kDropIn), 0);
  EXPECT_EQ(f.nm.reloads, 1);
  EXPECT_FALSE(f.nm.devices["so0"]);
}

TEST(NetworkManagerOutputTest, AFileEditedByHandIsPutBackAtTheNextChange) {
  Fixture f;
  ASSERT_THAT(f.Update({"so0"}), IsEmpty());
  f.fs.AddFile(kDropIn, "[device-rocenet]\nmanaged=1\n");
  EXPECT_THAT(f.Update({"so0"}), IsEmpty());
  EXPECT_EQ(Content(f.fs), RenderNetworkManagerDropIn({"so0"}));
}

TEST(NetworkManagerOutputTest, NoPortsNoFile) {
  Fixture f;
  ASSERT_THAT(f.Update({"so0"}), IsEmpty());
  EXPECT_THAT(f.Update({}), IsEmpty());
  EXPECT_EQ(Content(f.fs), std::nullopt);
  EXPECT_EQ(f.nm.reloads, 2);
}

TEST(NetworkManagerOutputTest, WithoutNetworkManagerTheFileIsWrittenAndNothingFails) {
  Fixture f;
  f.nm.running = false;
  EXPECT_THAT(f.Update({"so0", "so1"}), IsEmpty());
  EXPECT_EQ(Content(f.fs), RenderNetworkManagerDropIn({"so0", "so1"}));
  // One try per change: nothing is asked about the ports.
  EXPECT_THAT(f.nm.calls, ElementsAre("reload"));
  // NetworkManager started meanwhile: the next change tells it.
  f.nm.running = true;
  f.nm.devices = {{"so0", true}};
  EXPECT_THAT(f.Update({"so0"}), IsEmpty());
  EXPECT_FALSE(f.nm.devices["so0"]);
}

TEST(NetworkManagerOutputTest, AnUnsafeNameIsLeftOutAndReportedTheOthersStillProtected) {
  Fixture f;
  f.nm.devices = {{"so0", true}, {"so,1", true}};
  std::vector<absl::Status> errors = f.Update({"so0", "so,1"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(errors[0].message(), HasSubstr(kDropIn));
  EXPECT_THAT(errors[0].message(), HasSubstr("port \"so,1\""));
  EXPECT_EQ(Content(f.fs), RenderNetworkManagerDropIn({"so0"}));
  EXPECT_FALSE(f.nm.devices["so0"]);
  EXPECT_TRUE(f.nm.devices["so,1"]);
}

TEST(NetworkManagerOutputTest, ADeviceErrorIsReportedAndTheOtherPortsGoOn) {
  Fixture f;
  f.nm.devices = {{"so0", true}, {"so1", true}};
  f.nm.fail["so0"] = absl::PermissionDeniedError(
      "NetworkManager device so0: set Managed to false: "
      "org.freedesktop.NetworkManager.PermissionDenied: not authorized");
  std::vector<absl::Status> errors = f.Update({"so0", "so1"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(errors[0].message(), HasSubstr("NetworkManager device so0"));
  EXPECT_FALSE(f.nm.devices["so1"]);
}

TEST(NetworkManagerOutputTest, AFailedWriteIsReportedWithThePathAndNetworkManagerNotTold) {
  Fixture f;
  f.fs.FailNextWrite(absl::PermissionDeniedError("write: Read-only file system"), kDropIn);
  std::vector<absl::Status> errors = f.Update({"so0"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message(), HasSubstr(absl::StrCat("NetworkManager drop-in ", kDropIn)));
  EXPECT_THAT(f.nm.calls, IsEmpty());
  // The next update tries again.
  EXPECT_THAT(f.Update({"so0"}), IsEmpty());
  EXPECT_EQ(Content(f.fs), RenderNetworkManagerDropIn({"so0"}));
  EXPECT_EQ(f.nm.reloads, 1);
}

TEST(HostOutputsNetworkManagerTest, OnWithItsPathKeptOnAStopAndOffWithout) {
  FakeFileSystem fs;
  FakeClock clock;
  FakeNetworkManager nm;
  nm.devices = {{"so0", true}};
  OutputConfig config;
  config.gaudinet_path = "";
  config.network_manager_path = kDropIn;
  HostOutputs outputs(&fs, &clock, config, &nm);
  ASSERT_OK(outputs.Update(Ports({"so0"})));
  EXPECT_EQ(Content(fs), RenderNetworkManagerDropIn({"so0"}));
  EXPECT_FALSE(nm.devices["so0"]);
  // A clean stop keeps it: the ports stay configured, and NetworkManager
  // must not take them before the next rocenetd starts.
  ASSERT_OK(outputs.Withdraw());
  EXPECT_EQ(Content(fs), RenderNetworkManagerDropIn({"so0"}));

  FakeFileSystem untouched;
  FakeNetworkManager idle;
  config.network_manager_path = "";
  HostOutputs off(&untouched, &clock, config, &idle);
  ASSERT_OK(off.Update(Ports({"so0"})));
  EXPECT_EQ(untouched.write_count(), 0);
  EXPECT_THAT(idle.calls, IsEmpty());
}

}  // namespace
}  // namespace rocenet::outputs
