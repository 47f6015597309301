// SPDX-License-Identifier: Apache-2.0
// HostOutputs::RemoveAll: rocenet leaving the node takes back every output
// it wrote, and the CNI plugin only once no pod holds a port; it says what
// it removed and what it kept and why, and a second call finds nothing.
#include <string>
#include <vector>

#include "daemon/outputs/host_outputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_network_manager.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::outputs {
// Named, not anonymous: a unity build compiles this file with the other
// outputs tests, which have helpers of the same names.
namespace remove_all_test {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeNetworkManager;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGaudinet[] = "/etc/habanalabs/gaudinet.json";
constexpr char kNetworkDir[] = "/etc/systemd/network";
constexpr char kNfd[] = "/etc/kubernetes/node-feature-discovery/features.d/rocenet";
constexpr char kCni[] = "/host/cni/bin/rocenet";

PortOutput Ready(const std::string& name, int index) {
  PortOutput port;
  port.name = name;
  port.gaudi = true;
  port.mac = "b0:fd:0b:f0:28:1" + std::to_string(index);
  port.provisioned = true;
  port.local_ip = "10.200." + std::to_string(index) + ".1";
  port.prefix_length = 30;
  port.gateway_ip = "10.200." + std::to_string(index) + ".2";
  port.gateway_mac = "0c:42:a1:00:00:0" + std::to_string(index);
  port.routes = {{"10.200.0.0/16", port.gateway_ip}};
  port.healthy = true;
  return port;
}

class HostOutputsRemoveAllTest : public ::testing::Test {
 protected:
  HostOutputsRemoveAllTest() {
    config_.gaudinet_path = kGaudinet;
    config_.networkd_dir = kNetworkDir;
    config_.nfd_features_path = kNfd;
    config_.cni_plugin_path = kCni;
    fs_.AddFile(kCni,
                "\x7f"
                "ELF",
                0755);
    // The host's own networkd file, which is not rocenet's.
    fs_.AddFile(std::string(kNetworkDir) + "/10-eth0.network", "[Match]\nName=eth0\n");
    outputs_ = std::make_unique<HostOutputs>(&fs_, &clock_, config_);
    EXPECT_OK(outputs_->Update({Ready("so0", 0), Ready("so1", 1)}));
  }

  static std::vector<std::string> Whats(const std::vector<RemovalItem>& items) {
    std::vector<std::string> out;
    for (const RemovalItem& item : items) out.push_back(item.what);
    return out;
  }

  FakeFileSystem fs_;
  FakeClock clock_;
  OutputConfig config_;
  std::unique_ptr<HostOutputs> outputs_;
};

TEST_F(HostOutputsRemoveAllTest, EveryOutputGoesWithTheCniPluginWhenNoPodHoldsAPort) {
  const RemovalReport report = outputs_->RemoveAll({});
  EXPECT_THAT(Whats(report.removed),
              ElementsAre("file /etc/habanalabs/gaudinet.json",
                          "file /etc/systemd/network/50-rocenet-so0.network",
                          "file /etc/systemd/network/50-rocenet-so1.network",
                          "file /etc/kubernetes/node-feature-discovery/features.d/rocenet",
                          "file /host/cni/bin/rocenet"));
  EXPECT_THAT(report.kept, IsEmpty());
  EXPECT_FALSE(fs_.GetFile(kGaudinet).has_value());
  EXPECT_FALSE(fs_.GetFile(kNfd).has_value());
  EXPECT_FALSE(fs_.GetFile(kCni).has_value());
  EXPECT_TRUE(fs_.GetFile(std::string(kNetworkDir) + "/10-eth0.network").has_value());
  // The directories are the host's.
  EXPECT_TRUE(fs_.HasDirectory(kNetworkDir));
}

TEST_F(HostOutputsRemoveAllTest, TheCniPluginStaysWhilePodsHoldPortsAndSaysWhich) {
  const RemovalReport report = outputs_->RemoveAll({"pod training/job-1"});
  EXPECT_THAT(Whats(report.removed), ::testing::Not(::testing::Contains(HasSubstr(kCni))));
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_EQ(report.kept[0].what, "file /host/cni/bin/rocenet");
  EXPECT_THAT(report.kept[0].reason, HasSubstr("pod training/job-1 still uses a port"));
  EXPECT_TRUE(fs_.GetFile(kCni).has_value());
}

TEST_F(HostOutputsRemoveAllTest, ASecondCallRemovesNothing) {
  outputs_->RemoveAll({});
  const int removed = fs_.remove_count();
  const RemovalReport again = outputs_->RemoveAll({});
  EXPECT_THAT(again.removed, IsEmpty());
  EXPECT_THAT(again.kept, IsEmpty());
  EXPECT_EQ(fs_.remove_count(), removed);
}

TEST_F(HostOutputsRemoveAllTest, AFailureKeepsItsFileWithTheErrorAndTheRestStillGoes) {
  fs_.FailNextRemove(
      absl::PermissionDeniedError("remove /etc/habanalabs/gaudinet.json: Read-only file system"));
  const RemovalReport report = outputs_->RemoveAll({});
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_EQ(report.kept[0].what, "file /etc/habanalabs/gaudinet.json");
  EXPECT_THAT(report.kept[0].reason, HasSubstr("Read-only file system"));
  EXPECT_EQ(report.removed.size(), 4u);
  EXPECT_TRUE(fs_.GetFile(kGaudinet).has_value());
  // Tried again, it goes.
  EXPECT_THAT(Whats(outputs_->RemoveAll({}).removed),
              ElementsAre("file /etc/habanalabs/gaudinet.json"));
}

TEST_F(HostOutputsRemoveAllTest, OutputsThatAreOffAreNotTouched) {
  OutputConfig off;
  off.gaudinet_path = "";
  HostOutputs none(&fs_, &clock_, off);
  const RemovalReport report = none.RemoveAll({});
  EXPECT_THAT(report.removed, IsEmpty());
  EXPECT_TRUE(fs_.GetFile(kGaudinet).has_value());
  EXPECT_TRUE(fs_.GetFile(kCni).has_value());
}

// The NetworkManager drop-in goes too, and NetworkManager reads its
// configuration again, so a port that appears later is its own again; a
// second call finds no drop-in and tells NetworkManager nothing.
TEST(HostOutputsRemoveAllNetworkManagerTest, TheDropInGoesAndNetworkManagerReloads) {
  FakeFileSystem fs;
  FakeClock clock;
  FakeNetworkManager network_manager;
  OutputConfig config;
  config.gaudinet_path = "";  // the drop-in alone
  config.network_manager_path = "/etc/NetworkManager/conf.d/90-rocenet.conf";
  HostOutputs outputs(&fs, &clock, config, &network_manager);
  EXPECT_OK(outputs.Update({Ready("so0", 0)}));
  ASSERT_TRUE(fs.GetFile(config.network_manager_path).has_value());
  const int reloads = network_manager.reloads;

  const RemovalReport report = outputs.RemoveAll({});
  EXPECT_THAT(report.removed, ::testing::SizeIs(1));
  EXPECT_EQ(report.removed[0].what, "file /etc/NetworkManager/conf.d/90-rocenet.conf");
  EXPECT_THAT(report.kept, IsEmpty());
  EXPECT_FALSE(fs.GetFile(config.network_manager_path).has_value());
  EXPECT_EQ(network_manager.reloads, reloads + 1);

  const RemovalReport again = outputs.RemoveAll({});
  EXPECT_THAT(again.removed, IsEmpty());
  EXPECT_EQ(network_manager.reloads, reloads + 1);

  // Without NetworkManager on the bus the drop-in still goes, and no error.
  network_manager.running = false;
  EXPECT_OK(outputs.Update({Ready("so0", 0)}));
  const RemovalReport absent = outputs.RemoveAll({});
  EXPECT_THAT(absent.removed, ::testing::SizeIs(1));
  EXPECT_THAT(absent.kept, IsEmpty());
}

}  // namespace remove_all_test
}  // namespace rocenet::outputs
