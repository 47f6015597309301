// SPDX-License-Identifier: Apache-2.0
// Node::Uninstall on fakes and a FakeLoop: a node addressed from LLDP, with
// its host outputs, a reservation and a port in a pod, takes back what
// rocenetd made, keeps the pod's port (named with its pod) and the CNI
// plugin while it is there, and from then on changes nothing: not after
// an address put back by hand, a new LLDP neighbor, a port that appears, a
// reload or the timers of the NFD file and the health memory.
#include <string>
#include <vector>

#include "daemon/addressing/applied_store.h"
#include "daemon/addressing/driver.h"
#include "daemon/node/node.h"
#include "daemon/outputs/host_outputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/encoded_frame.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_netns.h"
#include "tests/unit/fakes/fake_packet_socket.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeNetns;
using ::rocenet::testing::FakePacketSocketFactory;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kStateDir[] = "/var/lib/rocenet";
constexpr char kHealth[] = "/run/rocenet/health.json";
constexpr char kNetworkDir[] = "/etc/systemd/network";
constexpr char kNfd[] = "/etc/kubernetes/node-feature-discovery/features.d/rocenet";
constexpr char kCni[] = "/host/cni/bin/rocenet";
constexpr char kPodNetns[] = "/var/run/netns/pod1";
constexpr int kSo0 = 2;
constexpr int kSo1 = 3;

std::vector<std::string> Whats(const std::vector<RemovalItem>& items) {
  std::vector<std::string> out;
  for (const RemovalItem& item : items) out.push_back(item.what);
  return out;
}

class NodeUninstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.SetLink(testing::MakePhysicalLink(kSo0, "so0"));
    host_.SetLink(testing::MakePhysicalLink(kSo1, "so1"));
    pod_ = &netns_.AddNamespace(kPodNetns);
    fs_.AddDirectory("/run/rocenet");
    fs_.AddDirectory(kStateDir);
    fs_.AddFile(kCni,
                "\x7f"
                "ELF",
                0755);
    ASSERT_OK(journal_.Load());
    ASSERT_OK(store_.Load());
    manager_ = std::make_unique<attach::AttachManager>(&host_, &netns_, &journal_,
                                                       /*rdma=*/nullptr, &reservations_);
    inventory::PortSelection selection;
    selection.gaudi = false;
    selection.interfaces = {"so*"};
    inventory_ = std::make_unique<inventory::PortInventory>(selection, &sysfs_);
    addressing_ = std::make_unique<addressing::AddressingDriver>(&host_, &store_,
                                                                 addressing::PlannerConfig{});
    outputs::OutputConfig config;
    config.gaudinet_path = "";
    config.networkd_dir = kNetworkDir;
    config.nfd_features_path = kNfd;
    config.cni_plugin_path = kCni;
    outputs_ = std::make_unique<outputs::HostOutputs>(&fs_, &loop_, config);
    node_ = std::make_unique<Node>(NodeParts{.loop = &loop_,
                                             .netlink = &host_,
                                             .inventory = inventory_.get(),
                                             .sockets = &sockets_,
                                             .addressing = addressing_.get(),
                                             .outputs = outputs_.get(),
                                             .attach = manager_.get(),
                                             .fs = &fs_,
                                             .health_state_path = kHealth,
                                             .boot_id = "boot-1",
                                             .state_dir = kStateDir});
    ASSERT_OK(node_->Start());
    loop_.RunUntilIdle();
    Hear(kSo0, "no-alert 10.200.1.2/30");
    Hear(kSo1, "no-alert 10.200.2.2/30");
    ASSERT_TRUE(HasAddress(kSo0, "10.200.1.1/30"));
    ASSERT_TRUE(fs_.GetFile(std::string(kNetworkDir) + "/50-rocenet-so0.network").has_value());
    // so1 goes to a pod; so0 is reserved for a claim.
    ASSERT_OK(node_->Attach(PodRequest(), "L2"));
    loop_.RunUntilIdle();
    ASSERT_OK(node_->Reserve({.owner_uid = "8c1d2e3f-4a5b-4c6d-8e7f-001122334455",
                              .owner = "training/claim",
                              .pod_uids = {"uid-2"},
                              .port_ids = {PortId("so0")}}));
    loop_.Advance(kCounterSampleInterval);  // the health memory is saved
    ASSERT_TRUE(fs_.GetFile(kHealth).has_value());
    ASSERT_TRUE(fs_.GetFile(std::string(kStateDir) + "/addressing.json").has_value());
    ASSERT_TRUE(fs_.GetFile(std::string(kStateDir) + "/reservations.json").has_value());
  }
  void TearDown() override { node_->Shutdown(); }

  // The switch behind the port at `ifindex` says `description`.
  void Hear(int ifindex, const std::string& description) {
    lldp::Lldpdu pdu;
    pdu.chassis_id = {lldp::ChassisIdSubtype::kLocal, "leaf-01"};
    pdu.port_id = {lldp::PortIdSubtype::kInterfaceName, "Ethernet1/" + std::to_string(ifindex)};
    pdu.ttl_seconds = 120;
    pdu.port_descriptions = {description};
    ASSERT_TRUE(sockets_.Inject(ifindex, lldp::FrameOf(pdu), lldp::kSwitchMac));
    loop_.RunUntilIdle();
  }

  bool HasAddress(int ifindex, const char* prefix) const {
    const os::AddressInfo address{ifindex, P(prefix)};
    const std::vector<os::AddressInfo>& all = host_.addresses();
    return std::find(all.begin(), all.end(), address) != all.end();
  }

  std::string PortId(const std::string& name) {
    absl::StatusOr<std::shared_ptr<const NodeSnapshot>> snapshot = node_->Current();
    EXPECT_OK(snapshot);
    for (const inventory::Port& port : (*snapshot)->ports) {
      if (port.name == name) return port.id;
    }
    return "";
  }

  attach::AttachRequest PodRequest() {
    attach::AttachRequest request;
    request.container_id = "c1";
    request.netns = kPodNetns;
    request.ifname = "net1";
    request.device_id = PortId("so1");
    request.cni_version = "1.1.0";
    request.pod = attach::PodIdentity{"training", "job-1", "uid-1"};
    return request;
  }

  FakeNetlink host_;
  FakeNetns netns_{&host_};
  FakeNetlink* pod_ = nullptr;
  FakeFileSystem fs_;
  FakeSysfs sysfs_;
  FakePacketSocketFactory sockets_;
  FakeLoop loop_;
  attach::Journal journal_{&fs_, "/run/rocenet/attachments.json"};
  attach::ReservationStore reservations_{&fs_, std::string(kStateDir) + "/reservations.json"};
  addressing::AppliedStore store_{&fs_, std::string(kStateDir) + "/addressing.json"};
  std::unique_ptr<attach::AttachManager> manager_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  std::unique_ptr<addressing::AddressingDriver> addressing_;
  std::unique_ptr<outputs::HostOutputs> outputs_;
  std::unique_ptr<Node> node_;
};

TEST_F(NodeUninstallTest, RemovesWhatRocenetdMadeAndKeepsThePodsPortAndTheCniPlugin) {
  const int pod_mutations = pod_->mutations();
  absl::StatusOr<RemovalReport> report = node_->Uninstall();
  ASSERT_OK(report);
  // so1's networkd file is rocenet's too: it describes the port's host
  // configuration, which comes back with it.
  EXPECT_THAT(
      Whats(report->removed),
      ElementsAre("route 10.200.0.0/16 via 10.200.1.2 dev so0", "address 10.200.1.1/30 on so0",
                  "file /etc/systemd/network/50-rocenet-so0.network",
                  "file /etc/systemd/network/50-rocenet-so1.network",
                  "file /etc/kubernetes/node-feature-discovery/features.d/rocenet",
                  "file /run/rocenet/health.json", "file /var/lib/rocenet/addressing.json",
                  "file /var/lib/rocenet/reservations.json", "directory /var/lib/rocenet"));
  ASSERT_EQ(report->kept.size(), 2u);
  EXPECT_EQ(report->kept[0].what, "port so1 in pod training/job-1 (net1 in /var/run/netns/pod1)");
  EXPECT_THAT(report->kept[0].reason, HasSubstr("comes home when its pod ends"));
  EXPECT_EQ(report->kept[1].what, "file /host/cni/bin/rocenet");
  EXPECT_THAT(report->kept[1].reason, HasSubstr("pod training/job-1 still uses a port"));

  // What a user checks: no rocenet address or route in the host, the
  // files gone, the pod's port as it was.
  EXPECT_FALSE(HasAddress(kSo0, "10.200.1.1/30"));
  for (const os::RouteInfo& route : host_.routes()) EXPECT_NE(route.protocol, 158);
  EXPECT_FALSE(fs_.HasDirectory(kStateDir));
  EXPECT_FALSE(fs_.GetFile(kHealth).has_value());
  EXPECT_TRUE(fs_.GetFile(kCni).has_value());
  EXPECT_EQ(pod_->mutations(), pod_mutations);
  EXPECT_THAT(node_->ListReservations(), ::rocenet::testing::IsOkAndHolds(IsEmpty()));

  // Readers go on answering, and see the node uninstalled.
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> snapshot = node_->Current();
  ASSERT_OK(snapshot);
  EXPECT_TRUE((*snapshot)->uninstalled);
  EXPECT_FALSE((*snapshot)->addressing[0].provisioned);
}

TEST_F(NodeUninstallTest, ASecondCallRemovesNothingAndListsWhatIsStillKept) {
  ASSERT_OK(node_->Uninstall());
  const int mutations = host_.mutations();
  const int removes = fs_.remove_count();
  absl::StatusOr<RemovalReport> again = node_->Uninstall();
  ASSERT_OK(again);
  EXPECT_THAT(again->removed, IsEmpty());
  EXPECT_THAT(Whats(again->kept),
              ElementsAre("port so1 in pod training/job-1 (net1 in /var/run/netns/pod1)",
                          "file /host/cni/bin/rocenet"));
  EXPECT_EQ(host_.mutations(), mutations);
  EXPECT_EQ(fs_.remove_count(), removes);
}

TEST_F(NodeUninstallTest, TheCniPluginGoesOnceThePodsPortHasComeHome) {
  ASSERT_OK(node_->Uninstall());
  // The pod ends: its DEL still brings the port home.
  EXPECT_THAT(node_->Detach("c1", "net1"), ::rocenet::testing::IsOkAndHolds(true));
  loop_.RunUntilIdle();
  absl::StatusOr<RemovalReport> again = node_->Uninstall();
  ASSERT_OK(again);
  EXPECT_THAT(Whats(again->removed), ElementsAre("file /host/cni/bin/rocenet"));
  EXPECT_THAT(again->kept, IsEmpty());
  EXPECT_FALSE(fs_.GetFile(kCni).has_value());
}

TEST_F(NodeUninstallTest, AStepThatFailsIsKeptWithItsErrorAndTheRestIsStillDone) {
  // so0's route goes, its address does not.
  host_.FailAfter(1, absl::PermissionDeniedError("delete address: Operation not permitted"));
  absl::StatusOr<RemovalReport> report = node_->Uninstall();
  ASSERT_OK(report);
  ASSERT_EQ(report->kept.size(), 3u);
  EXPECT_EQ(report->kept[1].what, "address 10.200.1.1/30 on so0");
  EXPECT_THAT(report->kept[1].reason, HasSubstr("Operation not permitted"));
  EXPECT_THAT(Whats(report->removed), Contains("route 10.200.0.0/16 via 10.200.1.2 dev so0"));
  EXPECT_THAT(Whats(report->removed), Contains("directory /var/lib/rocenet"));
  EXPECT_TRUE(HasAddress(kSo0, "10.200.1.1/30"));
  // Called again, the address goes too; what else remains is only kept.
  absl::StatusOr<RemovalReport> again = node_->Uninstall();
  ASSERT_OK(again);
  EXPECT_THAT(Whats(again->removed), ElementsAre("address 10.200.1.1/30 on so0"));
  EXPECT_EQ(again->kept.size(), 2u);
  EXPECT_FALSE(HasAddress(kSo0, "10.200.1.1/30"));
}

TEST_F(NodeUninstallTest, AfterwardsNothingChangesTheNode) {
  ASSERT_OK(node_->Uninstall());
  // Drift: an admin puts the address back by hand and removes a route
  // rocenet would have added; the switch says something new; a port appears,
  // administratively down; a reload re-plans and sets PFC; time passes
  // beyond every timer (counter sample, NFD renewal, neighbor expiry).
  ASSERT_OK(host_.AddAddress({kSo0, P("10.200.1.1/30")}));
  const int mutations = host_.mutations();
  const int pod_mutations = pod_->mutations();
  const int writes = fs_.write_count();
  const int removes = fs_.remove_count();
  loop_.RunUntilIdle();
  Hear(kSo0, "no-alert 10.200.7.2/30");
  os::LinkInfo so2 = testing::MakePhysicalLink(4, "so2");
  so2.admin_up = false;
  host_.SetLink(so2);
  loop_.RunUntilIdle();
  node_->Replan();
  node_->SetPfc(qos::PfcRequest{}, /*unhealthy=*/false);
  loop_.Advance(absl::Minutes(10));

  EXPECT_EQ(host_.mutations(), mutations);
  EXPECT_EQ(pod_->mutations(), pod_mutations);
  EXPECT_EQ(fs_.write_count(), writes);
  EXPECT_EQ(fs_.remove_count(), removes);
  EXPECT_TRUE(HasAddress(kSo0, "10.200.1.1/30")) << "the hand-made address stays";
  EXPECT_FALSE(host_.link(4)->admin_up) << "the new port is not set up";
  EXPECT_FALSE(fs_.HasDirectory(kStateDir));
  EXPECT_FALSE(fs_.GetFile(kHealth).has_value());
  // The node still reads: the new port and the new neighbor show.
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> snapshot = node_->Current();
  ASSERT_OK(snapshot);
  EXPECT_EQ((*snapshot)->ports.size(), 3u);
  EXPECT_TRUE((*snapshot)->uninstalled);

  // Nothing is handed to a pod, reserved or reconciled any more.
  attach::AttachRequest another = PodRequest();
  another.container_id = "c2";
  another.device_id = PortId("so0");
  EXPECT_THAT(node_->Attach(another, "L2"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("uninstalled")));
  EXPECT_THAT(node_->Reserve({.owner_uid = "9c1d2e3f-4a5b-4c6d-8e7f-001122334455",
                              .owner = "training/other",
                              .pod_uids = {"uid-3"},
                              .port_ids = {PortId("so0")}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("uninstalled")));
  EXPECT_THAT(node_->Reconcile(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("uninstalled")));
  EXPECT_EQ(host_.mutations(), mutations);
  // A clean stop writes nothing either (no health memory).
  node_->Shutdown();
  EXPECT_EQ(fs_.write_count(), writes);
}

}  // namespace
}  // namespace rocenet::node
