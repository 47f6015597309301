// SPDX-License-Identifier: Apache-2.0
// Handing a port to a pod, against fake kernels for the host and the pod:
// what the pod sees, what the host sees and what the journal on disk says,
// after every success, every refusal and every failed step.
#include "daemon/attach/manager.h"

#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeNetns;
using ::rocenet::testing::MakeLink;
using ::rocenet::testing::MakePhysicalLink;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// --- Attach ------------------------------------------------------------------

TEST_F(AttachManagerTest, AttachByDeviceIdConfiguresThePortInThePod) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);

  EXPECT_EQ(record->container_id, "c1");
  EXPECT_EQ(record->ifname, "net1");
  EXPECT_EQ(record->netns, kPod);
  EXPECT_EQ(record->port_id, kPort0);
  EXPECT_EQ(record->host_ifname, "so0");
  EXPECT_EQ(record->mac, so0_mac_.ToString());
  EXPECT_EQ(record->pci_address, "0000:19:00.0");
  EXPECT_EQ(record->state, AttachState::kAttached);
  EXPECT_EQ(record->pod, (PodIdentity{"training", "worker-0", "uid-c1"}));
  EXPECT_EQ(record->cni_version, "1.1.0");
  EXPECT_EQ(record->created_unix, kNow);
  EXPECT_EQ(record->mtu, 9000u);
  EXPECT_EQ(record->local, P("10.200.1.1/30"));
  EXPECT_EQ(record->peer, A("10.200.1.2"));
  EXPECT_THAT(record->routes, ElementsAre(addressing::Route{P("10.200.0.0/16"), A("10.200.1.2")}));
  EXPECT_EQ(record->table, 1000u + kSo0);

  // The host lost so0 and kept so1.
  EXPECT_EQ(Named(host_, "so0"), nullptr);
  EXPECT_EQ(WithMac(host_, so0_mac_), nullptr);
  EXPECT_NE(Named(host_, "so1"), nullptr);
  // The pod has it as net1, configured, next to its own eth0.
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", 1002);
  EXPECT_NE(Named(*pod_, "eth0"), nullptr);
  EXPECT_EQ(pod_->ipv4_conf(Named(*pod_, "net1")->ifindex),
            (std::map<os::Ipv4Conf, uint32_t>{{os::Ipv4Conf::kArpIgnore, 1},
                                              {os::Ipv4Conf::kArpAnnounce, 2}}));
  // The journal on disk has it, as attached.
  EXPECT_THAT(OnDisk(), ElementsAre(*record));
  EXPECT_THAT(fs_.GetFile(kJournal)->content, HasSubstr("\"state\": \"attached\""));
  EXPECT_THAT(manager_->List(), ElementsAre(*record));
  ASSERT_NE(manager_->FindByPort(kPort0), nullptr);
  EXPECT_EQ(manager_->FindByPort(kPort0)->container_id, "c1");
}

TEST_F(AttachManagerTest, AttachByPciAddress) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request("c1", "0000:1a:00.0"));
  ASSERT_OK(record);
  EXPECT_EQ(record->port_id, kPort1);
  EXPECT_EQ(Named(host_, "so1"), nullptr);
  EXPECT_EQ(Named(*pod_, "net1")->mac, so1_mac_);
}

TEST_F(AttachManagerTest, TheRequestedMtuWins) {
  AttachRequest request = Request();
  request.mtu = 4200;
  absl::StatusOr<AttachmentRecord> record = Attach(request);
  ASSERT_OK(record);
  EXPECT_EQ(record->mtu, 4200u);
  EXPECT_EQ(Named(*pod_, "net1")->mtu, 4200u);
}

TEST_F(AttachManagerTest, AnL2AttachOnlyBringsThePortUp) {
  ports_[0].provisioned = false;
  ports_[0].applied.reset();
  AttachRequest request = Request();
  request.l3 = false;
  request.mtu = 9000;
  absl::StatusOr<AttachmentRecord> record = Attach(request);
  ASSERT_OK(record);
  EXPECT_FALSE(record->local.has_value());
  const os::LinkInfo* net1 = Named(*pod_, "net1");
  ASSERT_NE(net1, nullptr);
  EXPECT_TRUE(net1->admin_up);
  EXPECT_EQ(net1->mtu, 9000u);
  EXPECT_THAT(pod_->addresses(), IsEmpty());
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(pod_->ipv4_conf(net1->ifindex), IsEmpty());
}

// --- Refusals ------------------------------------------------------------------

TEST_F(AttachManagerTest, InvalidRequestsAreRefusedBeforeAnythingIsTouched) {
  netns_.AddNotANetns("/var/run/netns/file");
  struct Case {
    const char* name;
    std::function<void(AttachRequest&, std::vector<PortCandidate>&)> change;
    absl::StatusCode code;
    const char* message;
  } cases[] = {
      {"bad ifname", [](AttachRequest& r, auto&) { r.ifname = "net/1"; },
       absl::StatusCode::kInvalidArgument, "ifname \"net/1\""},
      {"long ifname", [](AttachRequest& r, auto&) { r.ifname = "a-very-long-name"; },
       absl::StatusCode::kInvalidArgument, "longer than 15"},
      {"bad netns path", [](AttachRequest& r, auto&) { r.netns = "/run/netns/../etc"; },
       absl::StatusCode::kInvalidArgument, "netns \"/run/netns/../etc\""},
      {"netns outside the runtime's places", [](AttachRequest& r, auto&) { r.netns = "/tmp/x"; },
       absl::StatusCode::kInvalidArgument, "netns \"/tmp/x\""},
      {"bad container id", [](AttachRequest& r, auto&) { r.container_id = "-c1"; },
       absl::StatusCode::kInvalidArgument, "container id"},
      {"mtu below the IPv4 minimum", [](AttachRequest& r, auto&) { r.mtu = 10; },
       absl::StatusCode::kInvalidArgument, "mtu 10"},
      {"mtu above 65535", [](AttachRequest& r, auto&) { r.mtu = 70000; },
       absl::StatusCode::kInvalidArgument, "mtu 70000"},
      {"netns that is not a netns",
       [](AttachRequest& r, auto&) { r.netns = "/var/run/netns/file"; },
       absl::StatusCode::kFailedPrecondition, "/var/run/netns/file is not a network namespace"},
      {"the node's own netns, by another path",
       [](AttachRequest& r, auto&) { r.netns = "/proc/1/ns/net"; },
       absl::StatusCode::kInvalidArgument,
       "netns \"/proc/1/ns/net\": is the node's own network namespace, not a pod's"},
      {"netns that does not exist",
       [](AttachRequest& r, auto&) { r.netns = "/var/run/netns/gone"; },
       absl::StatusCode::kNotFound, "/var/run/netns/gone"},
      {"unknown device id", [](AttachRequest& r, auto&) { r.device_id = "0000:99:00.0-p1"; },
       absl::StatusCode::kNotFound, "device id \"0000:99:00.0-p1\" is not a port of this node"},
      {"L3 port not provisioned",
       [](AttachRequest&, std::vector<PortCandidate>& p) { p[0].provisioned = false; },
       absl::StatusCode::kFailedPrecondition,
       "port 0000:19:00.0-p8 (so0) has no address from LLDP"},
      {"L3 port without an applied address",
       [](AttachRequest&, std::vector<PortCandidate>& p) { p[0].applied->local.reset(); },
       absl::StatusCode::kFailedPrecondition, "has no address from LLDP"},
      {"port not in the host",
       [](AttachRequest&, std::vector<PortCandidate>& p) { p[0].present = false; },
       absl::StatusCode::kFailedPrecondition,
       "port 0000:19:00.0-p8 (so0) is not in the host namespace"},
      {"refused plan",
       [](AttachRequest&, std::vector<PortCandidate>& p) {
         p[0].provisioned = false;
         p[0].plan_refused = true;
         p[0].plan_reason = "PeerIsNetworkAddress";
         p[0].plan_message = "port so0: peer 10.200.3.0/30 is the network address of its subnet";
       },
       absl::StatusCode::kFailedPrecondition,
       "port 0000:19:00.0-p8 (so0) has no address: its switch's Port Description is refused "
       "(PeerIsNetworkAddress: port so0: peer 10.200.3.0/30 is the network address of its "
       "subnet); fix the switch port, see rocectl addressing"},
      {"no port asked for", [](AttachRequest& r, std::vector<PortCandidate>&) { r.device_id = ""; },
       absl::StatusCode::kInvalidArgument,
       "deviceID: none given and no port reserved for pod training/worker-0 (uid uid-c1)"},
      {"no free port",
       [](AttachRequest& r, std::vector<PortCandidate>& p) {
         r.device_id = "";
         r.any_free_port = true;
         p[0].provisioned = false;
         p[1].present = false;
       },
       absl::StatusCode::kResourceExhausted,
       "no free port: port 0000:19:00.0-p8 (so0) has no address from LLDP yet; see rocectl "
       "addressing; port 0000:1a:00.0-p8 (so1) is not in the host namespace"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    AttachRequest request = Request();
    std::vector<PortCandidate> ports = ports_;
    c.change(request, ports);
    const Footprint before = Snapshot();

    absl::StatusOr<AttachmentRecord> record = manager_->Attach(request, ports, kNow);
    EXPECT_EQ(record.status().code(), c.code) << record.status();
    EXPECT_THAT(std::string(record.status().message()), HasSubstr(c.message));
    before.ExpectUnchanged();
    EXPECT_THAT(manager_->List(), IsEmpty());
    EXPECT_NE(Named(host_, "so0"), nullptr);
    EXPECT_NE(Named(host_, "so1"), nullptr);
  }
  EXPECT_FALSE(fs_.GetFile(kJournal).has_value());
}

// --- The same ADD again --------------------------------------------------------

TEST_F(AttachManagerTest, TheSameAttachTwiceAnswersTheSameAndDoesNothing) {
  absl::StatusOr<AttachmentRecord> first = Attach(Request());
  ASSERT_OK(first);
  const Footprint before = Snapshot();

  absl::StatusOr<AttachmentRecord> again = Attach(Request());
  ASSERT_OK(again);
  EXPECT_EQ(*again, *first);
  before.ExpectUnchanged();

  // Also when the retry asks for "any free port".
  absl::StatusOr<AttachmentRecord> any = Attach(Request("c1", ""));
  ASSERT_OK(any);
  EXPECT_EQ(*any, *first);
  before.ExpectUnchanged();
}

TEST_F(AttachManagerTest, TheSameAttachByPciAddressTwiceAnswersTheSame) {
  absl::StatusOr<AttachmentRecord> first = Attach(Request("c1", "0000:19:00.0"));
  ASSERT_OK(first);
  const Footprint before = Snapshot();

  absl::StatusOr<AttachmentRecord> again = Attach(Request("c1", "0000:19:00.0"));
  ASSERT_OK(again);
  EXPECT_EQ(*again, *first);
  before.ExpectUnchanged();
}

TEST_F(AttachManagerTest, TheSameInterfaceForAnotherDeviceOrNetnsAlreadyExists) {
  ASSERT_OK(Attach(Request()));
  netns_.AddNamespace(kPod2);
  const Footprint before = Snapshot();

  for (const AttachRequest& request : {Request("c1", kPort1), Request("c1", kPort0, kPod2)}) {
    absl::StatusOr<AttachmentRecord> other = Attach(request);
    EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists) << other.status();
    EXPECT_THAT(std::string(other.status().message()),
                HasSubstr("container c1 already has net1 (port 0000:19:00.0-p8)"));
  }
  before.ExpectUnchanged();
  EXPECT_NE(Named(host_, "so1"), nullptr);
}

// --- Rollback ------------------------------------------------------------------

struct Fakes {
  FakeNetlink* host;
  FakeNetlink* pod;
  FakeNetns* netns;
  FakeFileSystem* fs;
};

struct RollbackCase {
  const char* name;
  std::function<void(const Fakes&)> fail;
  const char* step;  // what the error must name
  // Whether the error names the port too: the first journal write fails
  // before the attach has begun.
  bool names_port;
};

void PrintTo(const RollbackCase& c, std::ostream* os) { *os << c.name; }

class AttachRollbackTest : public AttachManagerTest,
                           public ::testing::WithParamInterface<RollbackCase> {};

TEST_P(AttachRollbackTest, AFailedStepPutsThePortBackAndForgetsIt) {
  GetParam().fail(Fakes{&host_, pod_, &netns_, &fs_});

  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_FALSE(record.ok());
  EXPECT_EQ(record.status().code(), absl::StatusCode::kInternal) << record.status();
  if (GetParam().names_port) {
    EXPECT_THAT(std::string(record.status().message()),
                HasSubstr("attach port so0 to /var/run/netns/pod1 as net1: "));
  }
  EXPECT_THAT(std::string(record.status().message()), HasSubstr(GetParam().step));
  EXPECT_THAT(std::string(record.status().message()), HasSubstr("injected failure"));

  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_EQ(Named(*pod_, "net1"), nullptr);
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(pod_->addresses(), IsEmpty());
  EXPECT_THAT(pod_->routes(), IsEmpty());
  EXPECT_THAT(manager_->List(), IsEmpty());
  EXPECT_THAT(OnDisk(), IsEmpty());

  // Nothing was lost: the same ADD, retried, works.
  absl::StatusOr<AttachmentRecord> retry = Attach(Request());
  ASSERT_OK(retry);
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", retry->table);
}

absl::Status Injected() { return absl::InternalError("injected failure"); }

// The pod's kernel fails its n-th change (0: the first) during configuration:
// set MTU, set link up, add address, the port table's own subnet, the fabric
// in the port table, the fabric in the main table, the rule.
std::function<void(const Fakes&)> PodFailsChange(int n) {
  return [n](const Fakes& f) { f.pod->FailAfter(n, Injected()); };
}

INSTANTIATE_TEST_SUITE_P(
    EveryStep, AttachRollbackTest,
    ::testing::Values(
        RollbackCase{"JournalWrite", [](const Fakes& f) { f.fs->FailNextWrite(Injected()); },
                     "record the attachment: injected", /*names_port=*/false},
        RollbackCase{"Move", [](const Fakes& f) { f.host->FailNext(Injected()); },
                     "move into the pod", true},
        RollbackCase{"PodNetlinkOpen",
                     [](const Fakes& f) { f.netns->FailNextOpenNetlink(Injected()); },
                     "open netlink in the pod", true},
        RollbackCase{"Mtu", PodFailsChange(0), "set MTU 9000", true},
        RollbackCase{"LinkUp", PodFailsChange(1), "set link up", true},
        RollbackCase{"ArpIgnore", PodFailsChange(2), "set arp_ignore", true},
        RollbackCase{"ArpAnnounce", PodFailsChange(3), "set arp_announce", true},
        RollbackCase{"Address", PodFailsChange(4), "add address 10.200.1.1/30", true},
        RollbackCase{"SubnetRoute", PodFailsChange(5), "add route 10.200.1.0/30 table 1002", true},
        RollbackCase{"FabricRouteInPortTable", PodFailsChange(6),
                     "add route 10.200.0.0/16 table 1002", true},
        RollbackCase{"FabricRouteInMainTable", PodFailsChange(7),
                     "add route 10.200.0.0/16: ", true},
        RollbackCase{"Rule", PodFailsChange(8), "add rule from 10.200.1.1", true},
        RollbackCase{"FinalJournalWrite",
                     [](const Fakes& f) { f.fs->FailWriteAfter(1, Injected()); },
                     "record the attachment as done", true}),
    [](const ::testing::TestParamInfo<RollbackCase>& info) {
      return std::string(info.param.name);
    });

TEST_F(AttachManagerTest, AFailedMoveLeavesThePortAsItWas) {
  // The kernel refuses the move: the pod already has a net1.
  pod_->SetLink(MakeLink(9, "net1"));
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  EXPECT_EQ(record.status().code(), absl::StatusCode::kAlreadyExists) << record.status();
  EXPECT_THAT(std::string(record.status().message()), HasSubstr("move into the pod"));
  // Untouched: still up, not renamed, not moved.
  EXPECT_EQ(*host_.link(kSo0), MakePhysicalLink(kSo0, "so0"));
  EXPECT_EQ(Named(*pod_, "net1")->ifindex, 9);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

}  // namespace
}  // namespace rocenet::attach
