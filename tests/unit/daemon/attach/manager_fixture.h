// SPDX-License-Identifier: Apache-2.0
// The fixture of the AttachManager tests: a host with two physical ports
// (so0, so1), a pod namespace with its own eth0, the journal in a fake state
// directory, and helpers that look at all of it the way `ip` would.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/attach/manager.h"
#include "daemon/attach/pod_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/printers.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_netns.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {

constexpr char kJournal[] = "/var/lib/rocenet/attachments.json";
constexpr char kReservations[] = "/var/lib/rocenet/reservations.json";
constexpr char kPod[] = "/var/run/netns/pod1";
constexpr char kNetwork[] = "gaudi-net";
constexpr char kPod2[] = "/var/run/netns/pod2";
constexpr int kSo0 = 2;
constexpr int kSo1 = 3;
constexpr char kPort0[] = "0000:19:00.0-p8";
constexpr char kPort1[] = "0000:1a:00.0-p8";
constexpr int64_t kNow = 1717171717;

inline const os::LinkInfo* Named(const testing::FakeNetlink& netlink, const std::string& name) {
  for (const auto& [ifindex, link] : netlink.links()) {
    if (link.name == name) return &link;
  }
  return nullptr;
}

inline const os::LinkInfo* WithMac(const testing::FakeNetlink& netlink, const MacAddress& mac) {
  for (const auto& [ifindex, link] : netlink.links()) {
    if (link.mac == mac) return &link;
  }
  return nullptr;
}

// Nothing anyone can see changed: no journal write, no move, no kernel call.
class Footprint {
 public:
  Footprint(const testing::FakeFileSystem& fs, const testing::FakeNetlink& host,
            const testing::FakeNetlink& pod)
      : fs_(fs),
        host_(host),
        pod_(pod),
        writes_(fs.write_count()),
        moves_(host.moves().size()),
        host_mutations_(host.mutations()),
        pod_mutations_(pod.mutations()) {}

  void ExpectUnchanged() const {
    EXPECT_EQ(fs_.write_count(), writes_) << "the journal was written";
    EXPECT_EQ(host_.moves().size(), moves_) << "a port was moved";
    EXPECT_EQ(host_.mutations(), host_mutations_) << "the host was changed";
    EXPECT_EQ(pod_.mutations(), pod_mutations_) << "the pod was changed";
  }

 private:
  const testing::FakeFileSystem& fs_;
  const testing::FakeNetlink& host_;
  const testing::FakeNetlink& pod_;
  int writes_;
  size_t moves_;
  int host_mutations_;
  int pod_mutations_;
};

class AttachManagerTest : public ::testing::Test {
 protected:
  AttachManagerTest() {
    host_.SetLink(testing::MakePhysicalLink(kSo0, "so0"));
    host_.SetLink(testing::MakePhysicalLink(kSo1, "so1"));
    so0_mac_ = host_.link(kSo0)->mac;
    so1_mac_ = host_.link(kSo1)->mac;
    pod_ = &netns_.AddNamespace(kPod);
    // The pod's own interface, from its primary CNI; it holds the ifindex
    // so0 has in the host, so so0 gets another one in the pod.
    pod_->SetLink(testing::MakeLink(kSo0, "eth0"));
    fs_.AddDirectory("/var/lib/rocenet");
    ports_ = {Candidate(kSo0, "so0", kPort0, "0000:19:00.0", "10.200.1.1/30", "10.200.1.2"),
              Candidate(kSo1, "so1", kPort1, "0000:1a:00.0", "10.200.2.1/30", "10.200.2.2")};
    Restart();
  }

  // A port as the node reports it: in the host, provisioned from LLDP.
  PortCandidate Candidate(int ifindex, const std::string& name, const std::string& id,
                          const std::string& pci, const char* local, const char* peer) const {
    PortCandidate port;
    port.port_id = id;
    port.host_ifname = name;
    port.mac = host_.link(ifindex)->mac.ToString();
    port.pci_address = pci;
    port.ifindex = ifindex;
    port.mtu = host_.link(ifindex)->mtu;
    port.present = true;
    addressing::AppliedConfig applied;
    applied.port_id = id;
    applied.ifname = name;
    applied.local = P(local);
    applied.peer = A(peer);
    applied.routes = {addressing::Route{P("10.200.0.0/16"), A(peer)}};
    applied.mtu = 9000;
    applied.description = absl::StrCat("no-alert ", peer, "/30");
    port.applied = applied;
    port.provisioned = true;
    return port;
  }

  static AttachRequest Request(const std::string& container_id = "c1",
                               const std::string& device_id = kPort0,
                               const std::string& netns = kPod,
                               const std::string& ifname = "net1") {
    AttachRequest request;
    request.container_id = container_id;
    request.netns = netns;
    request.ifname = ifname;
    request.device_id = device_id;
    request.cni_version = "1.1.0";
    request.network = kNetwork;
    request.pod = PodIdentity{"training", "worker-0", "uid-" + container_id};
    return request;
  }

  // A request without a device id from a network that allows any free port
  // (a runtime without kubelet).
  static AttachRequest AnyPort(const std::string& container_id, const std::string& netns = kPod,
                               const std::string& ifname = "net1") {
    AttachRequest request = Request(container_id, "", netns, ifname);
    request.any_free_port = true;
    return request;
  }

  Footprint Snapshot() const { return Footprint(fs_, host_, *pod_); }

  // rocenetd starting again on the same state directory.
  void Restart() {
    manager_.reset();
    journal_ = std::make_unique<Journal>(&fs_, kJournal);
    ASSERT_OK(journal_->Load());
    reservations_ = std::make_unique<ReservationStore>(&fs_, kReservations);
    ASSERT_OK(reservations_->Load());
    manager_ = std::make_unique<AttachManager>(&host_, &netns_, journal_.get(), host_rdma_,
                                               reservations_.get(), hcl_files_);
    manager_->Recover();
  }

  // As if rocenetd had died with `records` in its journal.
  void CrashWith(const std::vector<AttachmentRecord>& records) {
    fs_.AddFile(kJournal, SerializeJournal(records), 0600);
    Restart();
  }

  // As the node does, with the ports as the host's links are now: a port
  // that went away and came back may have another ifindex.
  absl::StatusOr<AttachmentRecord> Attach(const AttachRequest& request) {
    for (PortCandidate& port : ports_) {
      const os::LinkInfo* link = Named(host_, port.host_ifname);
      port.present = link != nullptr;
      if (link != nullptr) port.ifindex = link->ifindex;
    }
    return manager_->Attach(request, ports_, kNow);
  }

  // What a restarted rocenetd would find in the journal.
  std::vector<AttachmentRecord> OnDisk() {
    Journal journal(&fs_, kJournal);
    absl::Status loaded = journal.Load();
    EXPECT_OK(loaded);
    return journal.All();
  }

  // The port is in the host under its own name, up, and nowhere in `pod`.
  void ExpectInHost(const std::string& name, const MacAddress& mac,
                    const testing::FakeNetlink* pod) {
    const os::LinkInfo* link = Named(host_, name);
    ASSERT_NE(link, nullptr) << name << " is not in the host";
    EXPECT_EQ(link->mac, mac);
    EXPECT_TRUE(link->admin_up) << name << " is down";
    EXPECT_EQ(WithMac(host_, mac), link) << "two links with the MAC of " << name;
    if (pod != nullptr) {
      EXPECT_EQ(WithMac(*pod, mac), nullptr) << name << " is still in the pod";
    }
  }

  // Everything the pod sees of a configured net1 holding so0.
  void ExpectConfiguredInPod(const testing::FakeNetlink& pod, const char* local, const char* peer,
                             uint32_t table) {
    const os::LinkInfo* link = Named(pod, "net1");
    ASSERT_NE(link, nullptr);
    EXPECT_EQ(link->mac, so0_mac_);
    EXPECT_TRUE(link->admin_up);
    EXPECT_EQ(link->mtu, 9000u);
    const int ifindex = link->ifindex;
    EXPECT_THAT(pod.addresses(), ::testing::ElementsAre(os::AddressInfo{ifindex, P(local)}));
    const uint8_t ours = addressing::kRouteProtocol;
    EXPECT_THAT(
        pod.routes(),
        ::testing::IsSupersetOf(
            {os::RouteInfo{P(local).Network(), std::nullopt, ifindex, ours, table, 0},
             os::RouteInfo{P("10.200.0.0/16"), A(peer), ifindex, ours, table, 0},
             os::RouteInfo{P("10.200.0.0/16"), A(peer), ifindex, ours, os::kMainTable,
                           addressing::kRouteMetricBase + static_cast<uint32_t>(ifindex)}}));
    EXPECT_THAT(pod.rules(), ::testing::ElementsAre(os::RuleInfo{Ipv4Prefix(P(local).address(), 32),
                                                                 table, kRulePriority, ours}));
  }

  testing::FakeNetlink host_;
  testing::FakeNetns netns_{&host_};
  testing::FakeNetlink* pod_ = nullptr;
  testing::FakeFileSystem fs_;
  MacAddress so0_mac_;
  MacAddress so1_mac_;
  std::vector<PortCandidate> ports_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<ReservationStore> reservations_;
  // The RDMA subsystem as the host sees it; null: a kernel without RDMA.
  os::Rdma* host_rdma_ = nullptr;
  // The reservations' HCL files; null: none.
  ReservationFiles* hcl_files_ = nullptr;
  std::unique_ptr<AttachManager> manager_;
};

}  // namespace rocenet::attach
