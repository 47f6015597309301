// SPDX-License-Identifier: Apache-2.0
// ReservationFiles: a reservation's HCL directory holds what the device
// plugin would write for an allocation of the same ports, follows address
// changes, goes on Release, and is made right at start, where claim-*
// directories of no reservation go and the device plugin's alloc-* stay.
#include "daemon/attach/reservation_files.h"

#include <string>
#include <vector>

#include "daemon/api/proto_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/device/allocate.h"
#include "plugins/device/port_map.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kHclDir[] = "/run/rocenet/hcl";
constexpr char kUid[] = "8c1d2e3f-4a5b-4c6d-8e7f-001122334455";
constexpr char kDir[] = "/run/rocenet/hcl/claim-8c1d2e3f-4a5b-4c6d-8e7f-001122334455";
constexpr char kGaudinet[] =
    "/run/rocenet/hcl/claim-8c1d2e3f-4a5b-4c6d-8e7f-001122334455/gaudinet.json";
constexpr char kMacInfo[] =
    "/run/rocenet/hcl/claim-8c1d2e3f-4a5b-4c6d-8e7f-001122334455/macAddrInfo.json";

HclPort Gaudi(int index, const std::string& local) {
  return HclPort{.id = "0000:33:00.0-p" + std::to_string(index),
                 .name = "so" + std::to_string(index),
                 .pci_address = "0000:33:00.0",
                 .mac = "b0:fd:0b:00:00:0" + std::to_string(index),
                 .port_index = index,
                 .gaudi = true,
                 .local = local,
                 .gateway_mac = local.empty() ? "" : "02:00:00:00:00:aa",
                 .l2 = false};
}

HclPort Nic() {
  return HclPort{.id = "mac-020000000099",
                 .name = "eth9",
                 .pci_address = "0000:5e:00.0",
                 .mac = "02:00:00:00:00:99",
                 .port_index = 0,
                 .gaudi = false,
                 .local = "10.200.9.1/30",
                 .gateway_mac = "02:00:00:00:00:bb",
                 .l2 = false};
}

Reservation Holding(std::vector<std::string> port_ids, const std::string& uid = kUid) {
  return Reservation{.owner_uid = uid,
                     .owner = "training/job",
                     .pod_uids = {"pod-a"},
                     .port_ids = std::move(port_ids),
                     .created_unix = 1717171717,
                     .hcl = {}};
}

std::string Content(const testing::FakeFileSystem& fs, const std::string& path) {
  std::optional<testing::FakeFileSystem::File> file = fs.GetFile(path);
  return file.has_value() ? file->content : "(none)";
}

class ReservationFilesTest : public ::testing::Test {
 protected:
  ReservationFilesTest() { ports_ = {Gaudi(1, "10.200.1.1/30"), Gaudi(2, ""), Nic()}; }

  testing::FakeFileSystem fs_;
  ReservationFiles files_{&fs_, kHclDir};
  std::vector<HclPort> ports_;
};

TEST_F(ReservationFilesTest, WritesTheFilesOfExactlyItsPorts) {
  files_.Sync(ports_, {});
  ASSERT_OK_AND_ASSIGN(HclDirectory dir, files_.Write(Holding({ports_[0].id})));
  EXPECT_EQ(dir, (HclDirectory{.path = kDir, .files = {"gaudinet.json", "macAddrInfo.json"}}));
  const std::vector<HclFile> want = HclFiles({ports_[0]}, ports_);
  ASSERT_EQ(want.size(), 2u);
  EXPECT_EQ(Content(fs_, kMacInfo), want[0].content);
  EXPECT_EQ(Content(fs_, kGaudinet), want[1].content);
  // so2 (no address) is not in gaudinet.json, but its MAC is in
  // macAddrInfo.json: HCL finds every NIC of the Gaudi there.
  EXPECT_THAT(Content(fs_, kGaudinet), ::testing::Not(HasSubstr("b0:fd:0b:00:00:02")));
  EXPECT_THAT(Content(fs_, kMacInfo), HasSubstr("b0:fd:0b:00:00:02"));
  EXPECT_EQ(fs_.GetFile(kGaudinet)->mode, 0644u);
  EXPECT_EQ(fs_.DirectoryMode(kDir), 0755u);
  EXPECT_EQ(files_.Find(kUid), dir);
}

TEST_F(ReservationFilesTest, APortWithoutAnAddressHasNoGaudinetAndANicNoDirectory) {
  files_.Sync(ports_, {});
  ASSERT_OK_AND_ASSIGN(HclDirectory waiting, files_.Write(Holding({ports_[1].id})));
  EXPECT_EQ(waiting, (HclDirectory{.path = kDir, .files = {"macAddrInfo.json"}}));
  EXPECT_FALSE(fs_.GetFile(kGaudinet).has_value());

  const std::string other = "0f0f0f0f-0000-4000-8000-000000000000";
  ASSERT_OK_AND_ASSIGN(HclDirectory nic, files_.Write(Holding({ports_[2].id}, other)));
  EXPECT_EQ(nic, HclDirectory{});
  EXPECT_FALSE(fs_.HasDirectory(absl::StrCat(kHclDir, "/claim-", other)));
}

TEST_F(ReservationFilesTest, TheSameContentAsTheDevicePluginForTheSamePorts) {
  // One node snapshot, read the two ways: the device plugin through the
  // API's messages, rocenetd from the snapshot itself.
  node::NodeSnapshot snapshot;
  for (int index : {1, 2, 3}) {
    inventory::Port port;
    port.name = absl::StrCat("so", index);
    port.present = true;
    port.pci.address = "0000:33:00.0";
    port.pci.port_index = index;
    port.discovery = inventory::Discovery::kGaudiSysfs;
    port.link.mac = *MacAddress::Parse(absl::StrCat("b0:fd:0b:00:00:1", index));
    port.id = inventory::MakePortId(port.pci, port.link, port.name);
    addressing::PortAddressing plan;
    plan.port_id = port.id;
    plan.name = port.name;
    // so3's plan is refused: its address is not one HCL may count on.
    plan.plan.state = index == 3 ? addressing::PlanState::kRefused : addressing::PlanState::kReady;
    plan.plan.local = *Ipv4Prefix::Parse(absl::StrCat("10.200.", index, ".1/30"));
    plan.plan.gateway_mac = *MacAddress::Parse(absl::StrCat("02:00:00:00:01:0", index));
    snapshot.ports.push_back(port);
    snapshot.addressing.push_back(plan);
  }
  v1::PortSnapshot message;
  api::ToProto(snapshot, &message);
  const device::PortMap device_ports = device::PortsOf(message);
  const std::vector<std::string> ids = {snapshot.ports[2].id, snapshot.ports[0].id};
  const std::vector<device::FileToWrite> device_files =
      device::HclDirectoryFiles(kDir, ids, device_ports);

  files_.Sync(HclPortsOf(snapshot.ports, snapshot.addressing, snapshot.mode), {});
  ASSERT_OK(files_.Write(Holding(ids)));
  ASSERT_EQ(device_files.size(), 2u);
  for (const device::FileToWrite& file : device_files) {
    EXPECT_EQ(Content(fs_, file.path), file.content) << file.path;
  }
}

TEST_F(ReservationFilesTest, SyncRewritesWhatChangedAndOnlyThat) {
  const Reservation held = Holding({ports_[0].id, ports_[1].id});
  files_.Sync(ports_, {held});
  ASSERT_OK(files_.Write(held));
  const int mac_writes = fs_.WriteCount(kMacInfo);

  ports_[1].local = "10.200.2.1/30";
  ports_[1].gateway_mac = "02:00:00:00:00:ab";
  EXPECT_EQ(files_.Sync(ports_, {held}), 1);
  EXPECT_EQ(Content(fs_, kGaudinet), *GaudinetJson({ports_[0], ports_[1]}));
  EXPECT_EQ(fs_.WriteCount(kMacInfo), mac_writes);
  EXPECT_EQ(files_.Sync(ports_, {held}), 0);

  // The last address went: better no gaudinet.json than one HCL refuses.
  ports_[0].local.clear();
  ports_[1].local.clear();
  EXPECT_EQ(files_.Sync(ports_, {held}), 1);
  EXPECT_FALSE(fs_.GetFile(kGaudinet).has_value());
  EXPECT_EQ(files_.Find(kUid), (HclDirectory{.path = kDir, .files = {"macAddrInfo.json"}}));
}

TEST_F(ReservationFilesTest, AFailedRewriteIsTriedAgainOnTheNextSync) {
  const Reservation held = Holding({ports_[0].id});
  files_.Sync(ports_, {held});
  ASSERT_OK(files_.Write(held));
  const std::string before = Content(fs_, kGaudinet);

  ports_[0].local = "10.200.7.1/30";
  fs_.FailNextWrite(absl::ResourceExhaustedError("No space left on device"), kGaudinet);
  EXPECT_EQ(files_.Sync(ports_, {held}), 0);
  EXPECT_EQ(Content(fs_, kGaudinet), before);
  EXPECT_EQ(files_.Sync(ports_, {held}), 1);
  EXPECT_THAT(Content(fs_, kGaudinet), HasSubstr("10.200.7.1"));
}

TEST_F(ReservationFilesTest, RemoveTakesTheDirectoryAndRetriesWhatFailed) {
  files_.Sync(ports_, {});
  ASSERT_OK(files_.Write(Holding({ports_[0].id})));
  fs_.FailNextRemove(absl::PermissionDeniedError("Permission denied"));
  files_.Remove(kUid);
  EXPECT_EQ(files_.Find(kUid), HclDirectory{});
  EXPECT_TRUE(fs_.HasDirectory(kDir));

  files_.Sync(ports_, {});
  EXPECT_FALSE(fs_.HasDirectory(kDir));
  EXPECT_FALSE(fs_.GetFile(kGaudinet).has_value());
  EXPECT_FALSE(fs_.GetFile(kMacInfo).has_value());
}

TEST_F(ReservationFilesTest, StartUpMakesLoadedReservationsRightAndLeavesAllocationsAlone) {
  const Reservation held = Holding({ports_[0].id});
  const std::vector<HclFile> want = HclFiles({ports_[0]}, ports_);
  // A directory from before the restart: macAddrInfo.json current,
  // gaudinet.json stale.
  fs_.AddFile(kMacInfo, want[0].content);
  fs_.AddFile(kGaudinet, "{\"NIC_NET_CONFIG\": []}\n");
  // A reservation released while rocenetd was down, with a temporary file
  // of a write a crash cut short.
  const std::string orphan = absl::StrCat(kHclDir, "/claim-00000000-0000-4000-8000-000000000000");
  fs_.AddFile(orphan + "/gaudinet.json", "{}");
  fs_.AddFile(orphan + "/.gaudinet.json.tmpAb12Cd", "{");
  // The device plugin's.
  const std::string allocation = absl::StrCat(kHclDir, "/alloc-0000:33:00.0-p1");
  fs_.AddFile(allocation + "/gaudinet.json", "device plugin");
  fs_.AddFile(absl::StrCat(kHclDir, "/claims.txt"), "not a directory of ours");

  // A second reservation whose directory is missing.
  const std::string second = "11111111-2222-4333-8444-555555555555";
  const Reservation missing = Holding({ports_[1].id}, second);

  ReservationFiles restarted(&fs_, kHclDir);
  EXPECT_EQ(restarted.Sync(ports_, {held, missing}), 2);
  EXPECT_EQ(Content(fs_, kGaudinet), want[1].content);
  EXPECT_EQ(fs_.WriteCount(kMacInfo), 0) << "a current file was rewritten";
  EXPECT_TRUE(fs_.GetFile(absl::StrCat(kHclDir, "/claim-", second, "/macAddrInfo.json")));
  EXPECT_FALSE(fs_.HasDirectory(orphan));
  EXPECT_EQ(Content(fs_, allocation + "/gaudinet.json"), "device plugin");
  EXPECT_EQ(Content(fs_, absl::StrCat(kHclDir, "/claims.txt")), "not a directory of ours");
  EXPECT_EQ(restarted.Find(kUid),
            (HclDirectory{.path = kDir, .files = {"gaudinet.json", "macAddrInfo.json"}}));
}

TEST_F(ReservationFilesTest, AnEmptyHclDirWritesNothing) {
  ReservationFiles off(&fs_, "");
  off.Sync(ports_, {});
  ASSERT_OK_AND_ASSIGN(HclDirectory dir, off.Write(Holding({ports_[0].id})));
  EXPECT_EQ(dir, HclDirectory{});
  EXPECT_EQ(fs_.write_count(), 0);
}

TEST_F(ReservationFilesTest, OnlyAUuidsCharactersNameADirectory) {
  EXPECT_OK(ValidateOwnerUid(kUid));
  EXPECT_OK(ValidateOwnerUid("8C1D2E3F-4A5B-4C6D-8E7F-001122334455"));
  for (const char* bad : {"..", "../../etc", "a/b", "claim-a-uid", "8c1d 2e3f"}) {
    EXPECT_THAT(ValidateOwnerUid(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a UUID")))
        << bad;
  }
  EXPECT_THAT(ValidateOwnerUid(std::string(65, 'a')), StatusIs(absl::StatusCode::kInvalidArgument));
  files_.Sync(ports_, {});
  EXPECT_THAT(files_.Write(Holding({ports_[0].id}, "../x")),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(fs_.write_count(), 0);
}

TEST(HclPortsOfTest, AReadyPlansAddressOrTheOneKeptWhileWaitingAndTheMode) {
  inventory::Port port;
  port.id = "0000:33:00.0-p1";
  port.name = "so1";
  port.pci.address = "0000:33:00.0";
  port.pci.port_index = 1;
  port.discovery = inventory::Discovery::kGaudiSysfs;
  port.link.mac = *MacAddress::Parse("b0:fd:0b:00:00:01");
  addressing::PortAddressing plan;
  plan.port_id = port.id;
  plan.plan.state = addressing::PlanState::kPending;
  plan.plan.local = *Ipv4Prefix::Parse("10.200.1.1/30");
  plan.plan.gateway_mac = *MacAddress::Parse("02:00:00:00:00:aa");

  std::vector<HclPort> pending = HclPortsOf({port}, {plan}, addressing::Mode::kL3);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].local, "");
  EXPECT_EQ(pending[0].gateway_mac, "");
  EXPECT_TRUE(pending[0].gaudi);
  EXPECT_EQ(pending[0].mac, "b0:fd:0b:00:00:01");

  // Waiting for LLDP (a restart, an expired neighbor) with an address
  // rocenet applied and keeps on the port: that address, and the switch MAC
  // it was applied with.
  addressing::AppliedConfig applied;
  applied.local = *Ipv4Prefix::Parse("10.200.9.1/30");
  applied.gateway_mac = *MacAddress::Parse("02:00:00:00:00:bb");
  plan.applied = applied;
  std::vector<HclPort> kept = HclPortsOf({port}, {plan}, addressing::Mode::kL3);
  EXPECT_EQ(kept[0].local, "10.200.9.1/30");
  EXPECT_EQ(kept[0].gateway_mac, "02:00:00:00:00:bb");
  // Refused: what the switch says is wrong; nothing HCL can count on.
  plan.plan.state = addressing::PlanState::kRefused;
  EXPECT_EQ(HclPortsOf({port}, {plan}, addressing::Mode::kL3)[0].local, "");

  plan.plan.state = addressing::PlanState::kReady;
  std::vector<HclPort> ready = HclPortsOf({port}, {plan}, addressing::Mode::kL3);
  EXPECT_EQ(ready[0].local, "10.200.1.1/30");
  EXPECT_EQ(ready[0].gateway_mac, "02:00:00:00:00:aa");
  EXPECT_FALSE(ready[0].l2);
  EXPECT_TRUE(HclPortsOf({port}, {}, addressing::Mode::kL2)[0].l2);
}

// rocenet leaving the node: every claim-* directory goes, held or not,
// each reported; the device plugin's alloc-* stay; a second call finds
// nothing, and a Sync writes none again.
TEST_F(ReservationFilesTest, RemoveAllTakesEveryClaimDirectoryAndNothingElse) {
  files_.Sync(ports_, {});
  ASSERT_OK(files_.Write(Holding({ports_[0].id})).status());
  const std::string orphan = absl::StrCat(kHclDir, "/claim-00000000-0000-0000-0000-000000000000");
  fs_.AddFile(orphan + "/gaudinet.json", "{}");
  const std::string allocation = absl::StrCat(kHclDir, "/alloc-0000:33:00.0-p1");
  fs_.AddFile(allocation + "/gaudinet.json", "{}");

  const RemovalReport report = files_.RemoveAll();
  ASSERT_EQ(report.removed.size(), 2u);
  EXPECT_EQ(report.removed[0].what, "directory " + orphan);
  EXPECT_EQ(report.removed[1].what, absl::StrCat("directory ", kDir));
  EXPECT_TRUE(report.kept.empty());
  EXPECT_FALSE(fs_.HasDirectory(kDir));
  EXPECT_FALSE(fs_.HasDirectory(orphan));
  EXPECT_TRUE(fs_.GetFile(allocation + "/gaudinet.json").has_value());
  EXPECT_EQ(files_.Find(kUid), HclDirectory{});

  EXPECT_TRUE(files_.RemoveAll().removed.empty());
}

TEST_F(ReservationFilesTest, RemoveAllKeepsADirectoryItCannotRemoveWithTheError) {
  files_.Sync(ports_, {});
  ASSERT_OK(files_.Write(Holding({ports_[0].id})).status());
  fs_.FailNextRemove(absl::PermissionDeniedError("remove: Permission denied"));
  const RemovalReport report = files_.RemoveAll();
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_EQ(report.kept[0].what, absl::StrCat("directory ", kDir));
  EXPECT_THAT(report.kept[0].reason, HasSubstr("Permission denied"));
  EXPECT_EQ(files_.RemoveAll().removed.size(), 1u);
}

}  // namespace
}  // namespace rocenet::attach
