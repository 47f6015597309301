// SPDX-License-Identifier: Apache-2.0
// AllocationFiles on a real temporary directory: an allocation's HCL files
// follow its ports' addresses, and every file goes when the allocation ends
// (its ports allocated again, kubelet no longer assigning them), not before:
// a restarted plugin takes a live allocation's files over where they are.
#include "plugins/device/allocation_files.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "plugins/device/plugin_server.h"
#include "tests/unit/plugins/device/hcl_rules.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::device {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AllocationFilesTest : public ::testing::Test {
 protected:
  // The directory first: the options and the files under test name it.
  static std::string MakeDir() {
    std::string pattern = ::testing::TempDir() + "allocation_files_XXXXXX";
    return mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  AllocateOptions Options() const {
    AllocateOptions o;
    o.resource_name = "rocenet.io/scale-out-port";
    o.devinfo_dir = dir_ + "/devinfo";
    o.hcl_dir = dir_ + "/hcl";
    return o;
  }

  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    for (int i = 0; i < 3; ++i) {
      PortInfo p;
      p.id = "0000:19:00.0-p" + std::to_string(8 + i);
      p.name = "so" + std::to_string(i);
      p.pci_address = "0000:19:00.0";
      p.mac = "02:00:00:00:00:0" + std::to_string(i);
      p.gateway_mac = "02:aa:00:00:00:0" + std::to_string(i);
      p.local = "10.200." + std::to_string(i) + ".1/30";
      p.port_index = 8 + i;
      p.gaudi = true;
      ports_[p.id] = p;
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Allocate as the service does it: build, write, track.
  ContainerAllocation Allocate(const std::vector<std::string>& ids, absl::Time when) {
    auto allocation = BuildContainerAllocation(ids, ports_, options_);
    EXPECT_OK(allocation);
    EXPECT_OK(files_.Write(*allocation, when));
    return *allocation;
  }

  std::vector<std::string> Left() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_)) {
      if (e.is_regular_file()) out.push_back(e.path().string().substr(dir_.size() + 1));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  const std::string dir_ = MakeDir();
  const AllocateOptions options_ = Options();
  PortMap ports_;
  AllocationFiles files_{Options()};
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(AllocationFilesTest, AnAddressThatMovesIsRewrittenInTheDirectory) {
  ContainerAllocation a = Allocate({"0000:19:00.0-p8", "0000:19:00.0-p9"}, t0_);
  const std::string gaudinet = a.hcl_dir + "/gaudinet.json";
  EXPECT_EQ(files_.Refresh(ports_), 0);  // nothing changed
  ports_["0000:19:00.0-p9"].local = "10.200.9.5/30";
  EXPECT_EQ(files_.Refresh(ports_), 1);
  const std::string text = Read(gaudinet);
  EXPECT_EQ(testing::HclRefusesGaudinet(text), "");
  EXPECT_NE(text.find("10.200.9.5"), std::string::npos);
  EXPECT_EQ(text.find("10.200.1.1"), std::string::npos);
  // No temporary file is left in the directory the container sees.
  EXPECT_THAT(Left(), ElementsAre("devinfo/rocenet.io-scale-out-port-0000:19:00.0-p8-device.json",
                                  "devinfo/rocenet.io-scale-out-port-0000:19:00.0-p9-device.json",
                                  a.hcl_dir.substr(dir_.size() + 1) + "/gaudinet.json",
                                  a.hcl_dir.substr(dir_.size() + 1) + "/macAddrInfo.json"));
}

TEST_F(AllocationFilesTest, GaudinetGoesWhenNoPortHasAnAddressAndComesBack) {
  ContainerAllocation a = Allocate({"0000:19:00.0-p8"}, t0_);
  const std::string gaudinet = a.hcl_dir + "/gaudinet.json";
  ASSERT_TRUE(std::filesystem::exists(gaudinet));
  ports_["0000:19:00.0-p8"].local = "";
  EXPECT_EQ(files_.Refresh(ports_), 1);
  EXPECT_FALSE(std::filesystem::exists(gaudinet));
  EXPECT_TRUE(std::filesystem::exists(a.hcl_dir + "/macAddrInfo.json"));
  ports_["0000:19:00.0-p8"].local = "10.200.0.1/30";
  EXPECT_EQ(files_.Refresh(ports_), 1);
  EXPECT_EQ(testing::HclRefusesGaudinet(Read(gaudinet)), "");
}

TEST_F(AllocationFilesTest, PortsAllocatedAgainEndTheOlderAllocation) {
  ContainerAllocation old = Allocate({"0000:19:00.0-p8", "0000:19:00.0-p9"}, t0_);
  ContainerAllocation other = Allocate({"0000:19:00.0-p10"}, t0_);
  Allocate({"0000:19:00.0-p9"}, t0_ + absl::Minutes(5));
  EXPECT_FALSE(std::filesystem::exists(old.hcl_dir));
  EXPECT_FALSE(std::filesystem::exists(options_.devinfo_dir +
                                       "/rocenet.io-scale-out-port-0000:19:00.0-p8-device.json"));
  // The new allocation's device-info file for p9 is the same path: kept.
  EXPECT_TRUE(std::filesystem::exists(options_.devinfo_dir +
                                      "/rocenet.io-scale-out-port-0000:19:00.0-p9-device.json"));
  EXPECT_TRUE(std::filesystem::exists(other.hcl_dir));
  EXPECT_THAT(files_.Allocations(),
              ElementsAre(ElementsAre("0000:19:00.0-p10"), ElementsAre("0000:19:00.0-p9")));
}

TEST_F(AllocationFilesTest, RetainEndsWhatKubeletNoLongerAssignsAfterTheGrace) {
  ContainerAllocation a = Allocate({"0000:19:00.0-p8"}, t0_);
  ContainerAllocation b = Allocate({"0000:19:00.0-p9"}, t0_);
  const absl::Duration grace = absl::Seconds(30);
  // Just allocated, not yet recorded by kubelet: kept.
  EXPECT_EQ(files_.Retain({}, ports_, t0_ + absl::Seconds(5), grace), 0);
  EXPECT_EQ(files_.Retain({{"0000:19:00.0-p9"}}, ports_, t0_ + absl::Minutes(1), grace), 1);
  EXPECT_FALSE(std::filesystem::exists(a.hcl_dir));
  EXPECT_TRUE(std::filesystem::exists(b.hcl_dir));
  EXPECT_THAT(files_.Allocations(), ElementsAre(ElementsAre("0000:19:00.0-p9")));
}

TEST_F(AllocationFilesTest, OneAnswerWithoutAnAllocationDoesNotEndIt) {
  // A kubelet that just restarted answers before it has its pods back: the
  // pod's allocation, seen assigned until then, stays through the grace.
  ContainerAllocation a = Allocate({"0000:19:00.0-p8"}, t0_);
  const absl::Duration grace = absl::Seconds(30);
  EXPECT_EQ(files_.Retain({{"0000:19:00.0-p8"}}, ports_, t0_ + absl::Minutes(10), grace), 0);
  EXPECT_EQ(files_.Retain({}, ports_, t0_ + absl::Minutes(10) + absl::Seconds(10), grace), 0);
  EXPECT_TRUE(std::filesystem::exists(a.hcl_dir));
  EXPECT_EQ(files_.Retain({{"0000:19:00.0-p8"}}, ports_,
                          t0_ + absl::Minutes(10) + absl::Seconds(20), grace),
            0);
  // Gone for good: ended once the grace has passed without it.
  EXPECT_EQ(files_.Retain({}, ports_, t0_ + absl::Minutes(10) + absl::Seconds(40), grace), 0);
  EXPECT_EQ(files_.Retain({}, ports_, t0_ + absl::Minutes(11), grace), 1);
  EXPECT_FALSE(std::filesystem::exists(a.hcl_dir));
}

TEST_F(AllocationFilesTest, ARestartedPluginWritesLiveAllocationsAgainAndDropsTheRest) {
  ContainerAllocation live = Allocate({"0000:19:00.0-p9", "0000:19:00.0-p8"}, t0_);
  ContainerAllocation dead = Allocate({"0000:19:00.0-p10"}, t0_);
  // The plugin crashed: its files stay, its memory is gone. A foreign file
  // in the shared device-info directory is not the plugin's to remove.
  const std::string foreign = options_.devinfo_dir + "/other.io-gpu-0-device.json";
  ASSERT_OK(WriteFiles({{foreign, "{}"}}));
  std::filesystem::remove(live.hcl_dir + "/gaudinet.json");
  AllocationFiles restarted(options_);
  restarted.Retain({{"0000:19:00.0-p8", "0000:19:00.0-p9"}}, ports_, t0_ + absl::Hours(1),
                   absl::Seconds(30));
  EXPECT_THAT(restarted.Allocations(),
              ElementsAre(ElementsAre("0000:19:00.0-p8", "0000:19:00.0-p9")));
  // The live allocation's directory is whole again, at the path mounted.
  EXPECT_EQ(testing::HclRefusesGaudinet(Read(live.hcl_dir + "/gaudinet.json")), "");
  EXPECT_FALSE(std::filesystem::exists(dead.hcl_dir));
  EXPECT_FALSE(std::filesystem::exists(options_.devinfo_dir +
                                       "/rocenet.io-scale-out-port-0000:19:00.0-p10-device.json"));
  EXPECT_TRUE(std::filesystem::exists(foreign));
}

TEST_F(AllocationFilesTest, ALiveAllocationWhosePortsAreUnknownYetIsNotRemoved) {
  ContainerAllocation live = Allocate({"0000:19:00.0-p8"}, t0_);
  AllocationFiles restarted(options_);
  // rocenetd not reached yet: no ports to write the files from.
  restarted.Retain({{"0000:19:00.0-p8"}}, PortMap(), t0_ + absl::Hours(1), absl::Seconds(30));
  EXPECT_TRUE(std::filesystem::exists(live.hcl_dir + "/macAddrInfo.json"));
  EXPECT_TRUE(std::filesystem::exists(options_.devinfo_dir +
                                      "/rocenet.io-scale-out-port-0000:19:00.0-p8-device.json"));
}

// A restarted plugin takes over a live allocation's files in place: the
// HCL directory a container has bind-mounted is the same directory (same
// inode) afterwards, not one removed and made again at the same path.
TEST_F(AllocationFilesTest, ARestartedPluginTakesOverTheLiveFilesInPlace) {
  ContainerAllocation live = Allocate({"0000:19:00.0-p8"}, t0_);
  ContainerAllocation ended = Allocate({"0000:19:00.0-p9"}, t0_);
  struct stat before {};
  ASSERT_EQ(stat(live.hcl_dir.c_str(), &before), 0);

  AllocationFiles restarted(options_);
  restarted.Retain({{"0000:19:00.0-p8"}}, ports_, t0_ + absl::Hours(1), absl::Seconds(30));
  struct stat after {};
  ASSERT_EQ(stat(live.hcl_dir.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_TRUE(std::filesystem::exists(live.hcl_dir + "/gaudinet.json"));
  EXPECT_FALSE(std::filesystem::exists(ended.hcl_dir));
  EXPECT_THAT(restarted.Allocations(), ElementsAre(std::vector<std::string>{"0000:19:00.0-p8"}));
}

}  // namespace
}  // namespace rocenet::device
