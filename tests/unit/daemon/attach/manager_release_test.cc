// SPDX-License-Identifier: Apache-2.0
// Taking ports back from pods: DEL, garbage collection of pods whose
// namespace died, and a restart after a crash at any point.
#include <functional>
#include <string>
#include <vector>

#include "daemon/attach/manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::MakeLink;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// --- Detach --------------------------------------------------------------------

TEST_F(AttachManagerTest, DetachBringsThePortHomeUnderItsName) {
  ASSERT_OK(Attach(Request()));

  absl::StatusOr<bool> detached = manager_->Detach("c1", "net1");
  ASSERT_OK(detached);
  EXPECT_TRUE(*detached);
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_EQ(Named(*pod_, "net1"), nullptr);
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(pod_->addresses(), IsEmpty());
  EXPECT_THAT(manager_->List(), IsEmpty());
  EXPECT_EQ(manager_->FindByPort(kPort0), nullptr);
  EXPECT_THAT(OnDisk(), IsEmpty());
  // The pod keeps its own interface.
  EXPECT_NE(Named(*pod_, "eth0"), nullptr);
}

TEST_F(AttachManagerTest, DetachPutsTheHostMtuBack) {
  AttachRequest request = Request();
  request.mtu = 4200;
  ASSERT_OK(Attach(request));
  ASSERT_EQ(Named(*pod_, "net1")->mtu, 4200u);

  ASSERT_TRUE(*manager_->Detach("c1", "net1"));
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_EQ(Named(host_, "so0")->mtu, 1500u);
}

TEST_F(AttachManagerTest, ACrashedDaemonsRecordStillPutsTheHostMtuBack) {
  AttachRequest request = Request();
  request.mtu = 4200;
  ASSERT_OK(Attach(request));
  Restart();

  ASSERT_TRUE(*manager_->Detach("c1", "net1"));
  EXPECT_EQ(Named(host_, "so0")->mtu, 1500u);
}

TEST_F(AttachManagerTest, DetachOfOnePortLeavesTheOtherInThePod) {
  ASSERT_OK(Attach(Request("c1", kPort0)));
  ASSERT_OK(Attach(Request("c1", kPort1, kPod, "net2")));
  ASSERT_TRUE(*manager_->Detach("c1", "net1"));

  ExpectInHost("so0", so0_mac_, pod_);
  const os::LinkInfo* net2 = Named(*pod_, "net2");
  ASSERT_NE(net2, nullptr);
  EXPECT_TRUE(net2->admin_up);
  EXPECT_THAT(pod_->addresses(), ElementsAre(os::AddressInfo{net2->ifindex, P("10.200.2.1/30")}));
  EXPECT_THAT(pod_->rules(), ElementsAre(os::RuleInfo{P("10.200.2.1/32"), 1000u + kSo1,
                                                      kRulePriority, addressing::kRouteProtocol}));
  EXPECT_THAT(OnDisk(), ElementsAre(::testing::Field(&AttachmentRecord::ifname, "net2")));
}

TEST_F(AttachManagerTest, DetachOfSomethingUnknownSucceedsWithNothingToDo) {
  const Footprint before = Snapshot();
  absl::StatusOr<bool> detached = manager_->Detach("c9", "net1");
  ASSERT_OK(detached);
  EXPECT_FALSE(*detached);
  before.ExpectUnchanged();
}

TEST_F(AttachManagerTest, DetachTwiceIsFineTheSecondTimeHasNothingToDo) {
  ASSERT_OK(Attach(Request()));
  ASSERT_TRUE(*manager_->Detach("c1", "net1"));
  const Footprint before = Snapshot();

  absl::StatusOr<bool> again = manager_->Detach("c1", "net1");
  ASSERT_OK(again);
  EXPECT_FALSE(*again);
  before.ExpectUnchanged();
  ExpectInHost("so0", so0_mac_, pod_);
}

TEST_F(AttachManagerTest, DetachFindsAPortRenamedInsideThePod) {
  ASSERT_OK(Attach(Request()));
  const int ifindex = Named(*pod_, "net1")->ifindex;
  ASSERT_OK(pod_->SetLinkDown(ifindex));
  ASSERT_OK(pod_->RenameLink(ifindex, "rail0"));

  ASSERT_TRUE(*manager_->Detach("c1", "net1"));
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_EQ(Named(*pod_, "rail0"), nullptr);
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, DetachAfterThePodNamespaceIsGone) {
  ASSERT_OK(Attach(Request()));
  netns_.DeleteNamespace(kPod);

  absl::StatusOr<bool> detached = manager_->Detach("c1", "net1");
  ASSERT_OK(detached);
  EXPECT_TRUE(*detached);
  ExpectInHost("so0", so0_mac_, nullptr);
  EXPECT_EQ(Named(host_, "net1"), nullptr);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, ADetachThatCannotBeRecordedKeepsTheAttachment) {
  ASSERT_OK(Attach(Request()));
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));

  absl::StatusOr<bool> detached = manager_->Detach("c1", "net1");
  EXPECT_EQ(detached.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(detached.status().message()),
              HasSubstr("detach port so0 from /var/run/netns/pod1"));
  // Write-ahead: without the journal nothing moves.
  EXPECT_NE(Named(*pod_, "net1"), nullptr);
  EXPECT_EQ(OnDisk().size(), 1u);
  // The next DEL does it.
  EXPECT_TRUE(*manager_->Detach("c1", "net1"));
  ExpectInHost("so0", so0_mac_, pod_);
}

// --- A pod namespace that died without a DEL -------------------------------------

TEST_F(AttachManagerTest, GcOfADeadNamespaceRestoresAPhysicalPortThatCameBack) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  // The kernel gives the port back to the host under the pod's name, down.
  netns_.DeleteNamespace(kPod);
  ASSERT_NE(Named(host_, "net1"), nullptr);
  ASSERT_FALSE(Named(host_, "net1")->admin_up);

  const std::vector<AttachmentRecord> released = manager_->ReleaseDeadNamespaces();
  EXPECT_THAT(released, ElementsAre(*record));
  ExpectInHost("so0", so0_mac_, nullptr);
  EXPECT_EQ(Named(host_, "net1"), nullptr);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, GcRestoresAPortTheKernelRenamedToDevN) {
  ASSERT_OK(Attach(Request()));
  // The host has a net1 of its own, so the port comes back as dev<ifindex>.
  host_.SetLink(MakeLink(20, "net1"));
  netns_.DeleteNamespace(kPod);
  const os::LinkInfo* back = WithMac(host_, so0_mac_);
  ASSERT_NE(back, nullptr);
  const std::string kernel_name = back->name;
  ASSERT_EQ(kernel_name, absl::StrCat("dev", back->ifindex));

  EXPECT_EQ(manager_->ReleaseDeadNamespaces().size(), 1u);
  ExpectInHost("so0", so0_mac_, nullptr);
  EXPECT_EQ(Named(host_, kernel_name), nullptr);
  // The host's own net1 is left alone.
  EXPECT_EQ(*Named(host_, "net1"), MakeLink(20, "net1"));
}

TEST_F(AttachManagerTest, APortWhoseHostNameWasTakenIsReleasedUnderTheKernelsName) {
  ASSERT_OK(Attach(Request()));
  // While the port was in the pod, another device took its host name.
  host_.SetLink(MakeLink(20, "so0"));
  netns_.DeleteNamespace(kPod);
  const os::LinkInfo* back = WithMac(host_, so0_mac_);
  ASSERT_NE(back, nullptr);
  const int ifindex = back->ifindex;

  // Released, not retried forever: the port stays as the kernel named it,
  // up, and the other so0 is left alone.
  EXPECT_EQ(manager_->ReleaseDeadNamespaces().size(), 1u);
  EXPECT_THAT(manager_->List(), IsEmpty());
  EXPECT_THAT(OnDisk(), IsEmpty());
  ASSERT_NE(host_.link(ifindex), nullptr);
  EXPECT_EQ(host_.link(ifindex)->name, "net1");
  EXPECT_TRUE(host_.link(ifindex)->admin_up);
  EXPECT_EQ(*Named(host_, "so0"), MakeLink(20, "so0"));
}

TEST_F(AttachManagerTest, GcOfADeadNamespaceForgetsAVirtualPort) {
  host_.SetLink(MakeLink(kSo0, "so0"));  // a veth standing in for a port
  ports_[0].mac = host_.link(kSo0)->mac.ToString();
  ports_[0].virtual_device = true;
  const MacAddress veth_mac = host_.link(kSo0)->mac;
  ASSERT_OK(Attach(Request()));
  netns_.DeleteNamespace(kPod);

  EXPECT_EQ(manager_->ReleaseDeadNamespaces().size(), 1u);
  EXPECT_EQ(WithMac(host_, veth_mac), nullptr);
  EXPECT_EQ(Named(host_, "so0"), nullptr);
  EXPECT_THAT(manager_->List(), IsEmpty());
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, APhysicalPortNotBackYetKeepsItsRecordUntilItIs) {
  ASSERT_OK(Attach(Request()));
  // The namespace is gone but the kernel has not handed the port back yet.
  const os::LinkInfo in_pod = *Named(*pod_, "net1");
  pod_->RemoveLink(in_pod.ifindex);
  netns_.DeleteNamespace(kPod);

  EXPECT_THAT(manager_->ReleaseDeadNamespaces(), IsEmpty());
  ASSERT_EQ(manager_->List().size(), 1u);

  // Back under a kernel-chosen name: the next check restores it.
  os::LinkInfo back = in_pod;
  back.name = "dev9";
  host_.SetLink(back);
  EXPECT_EQ(manager_->ReleaseDeadNamespaces().size(), 1u);
  EXPECT_THAT(manager_->List(), IsEmpty());
  EXPECT_NE(Named(host_, "so0"), nullptr);
}

TEST_F(AttachManagerTest, GcOfDeadNamespacesLeavesLiveOnesAlone) {
  FakeNetlink& pod2 = netns_.AddNamespace(kPod2);
  ASSERT_OK(Attach(Request("c1", kPort0)));
  ASSERT_OK(Attach(Request("c2", kPort1, kPod2)));
  netns_.DeleteNamespace(kPod);

  const std::vector<AttachmentRecord> released = manager_->ReleaseDeadNamespaces();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].container_id, "c1");
  ExpectInHost("so0", so0_mac_, nullptr);
  EXPECT_NE(Named(pod2, "net1"), nullptr);
  EXPECT_THAT(OnDisk(), ElementsAre(::testing::Field(&AttachmentRecord::container_id, "c2")));
  // Nothing else dead: nothing to do.
  EXPECT_THAT(manager_->ReleaseDeadNamespaces(), IsEmpty());
}

TEST_F(AttachManagerTest, GcWithValidIdsReleasesExactlyTheOthers) {
  FakeNetlink& pod2 = netns_.AddNamespace(kPod2);
  ASSERT_OK(Attach(Request("c1", kPort0)));
  absl::StatusOr<AttachmentRecord> c2 = Attach(Request("c2", kPort1, kPod2));
  ASSERT_OK(c2);

  EXPECT_THAT(manager_->Gc(kNetwork, {"c1", "c3"}), ElementsAre(*c2));
  ExpectInHost("so1", so1_mac_, &pod2);
  EXPECT_THAT(pod2.rules(), IsEmpty());
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", 1002);
  EXPECT_THAT(OnDisk(), ElementsAre(::testing::Field(&AttachmentRecord::container_id, "c1")));

  EXPECT_THAT(manager_->Gc(kNetwork, {"c1"}), IsEmpty());
  EXPECT_EQ(manager_->Gc(kNetwork, {}).size(), 1u);
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, GcOfOneNetworkLeavesTheOtherNetworksAlone) {
  FakeNetlink& pod2 = netns_.AddNamespace(kPod2);
  ASSERT_OK(Attach(Request("c1", kPort0)));
  AttachRequest other = Request("c2", kPort1, kPod2);
  other.network = "rail-b";
  ASSERT_OK(Attach(other));

  // gaudi-net's runtime knows no pod of its own any more; rail-b's does.
  EXPECT_THAT(manager_->Gc("rail-b", {"c2"}), IsEmpty());
  const std::vector<AttachmentRecord> released = manager_->Gc(kNetwork, {});
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].container_id, "c1");
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_NE(Named(pod2, "net1"), nullptr);
  ASSERT_EQ(OnDisk().size(), 1u);
  EXPECT_EQ(OnDisk()[0].network, "rail-b");
}

TEST_F(AttachManagerTest, GcLeavesRecordsOfNoKnownNetworkToTheDeadNamespaceSweep) {
  // A record written before attachments kept their network.
  AttachRequest old = Request("c1", kPort0);
  old.network.clear();
  ASSERT_OK(Attach(old));
  EXPECT_THAT(manager_->Gc(kNetwork, {}), IsEmpty());
  EXPECT_EQ(OnDisk().size(), 1u);

  netns_.DeleteNamespace(kPod);
  EXPECT_EQ(manager_->ReleaseDeadNamespaces().size(), 1u);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

// --- Restart -------------------------------------------------------------------

TEST_F(AttachManagerTest, RecoverKeepsAnAttachmentWhoseNamespaceLives) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  const Footprint before = Snapshot();

  Restart();
  before.ExpectUnchanged();
  EXPECT_THAT(manager_->List(), ElementsAre(*record));
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", 1002);
  // And it can still be detached.
  EXPECT_TRUE(*manager_->Detach("c1", "net1"));
  ExpectInHost("so0", so0_mac_, pod_);
}

TEST_F(AttachManagerTest, RecoverRollsBackAnAttachInTheMiddle) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  // Died after configuring the pod, before recording it as done.
  AttachmentRecord attaching = *record;
  attaching.state = AttachState::kAttaching;
  CrashWith({attaching});

  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(manager_->List(), IsEmpty());
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, RecoverRollsBackAnAttachThatNeverMoved) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  ASSERT_TRUE(*manager_->Detach("c1", "net1"));
  // Died right after recording the intent: the port never left the host.
  AttachmentRecord attaching = *record;
  attaching.state = AttachState::kAttaching;
  const size_t moves = host_.moves().size();
  CrashWith({attaching});

  EXPECT_EQ(host_.moves().size(), moves);
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, RecoverFinishesADetachInTheMiddle) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  AttachmentRecord detaching = *record;
  detaching.state = AttachState::kDetaching;
  CrashWith({detaching});

  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, RecoverFinishesADetachThatHadMovedThePortBack) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  ASSERT_TRUE(*manager_->Detach("c1", "net1"));
  AttachmentRecord detaching = *record;
  detaching.state = AttachState::kDetaching;
  CrashWith({detaching});

  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(AttachManagerTest, RecoverReleasesAnAttachmentWhoseNamespaceDied) {
  FakeNetlink& pod2 = netns_.AddNamespace(kPod2);
  ASSERT_OK(Attach(Request("c1", kPort0)));
  absl::StatusOr<AttachmentRecord> c2 = Attach(Request("c2", kPort1, kPod2));
  ASSERT_OK(c2);
  manager_.reset();  // rocenetd is down while the pod goes
  netns_.DeleteNamespace(kPod);
  Restart();

  ExpectInHost("so0", so0_mac_, nullptr);
  EXPECT_EQ(Named(host_, "net1"), nullptr);
  EXPECT_THAT(manager_->List(), ElementsAre(*c2));
  EXPECT_NE(Named(pod2, "net1"), nullptr);
  // The port is free again.
  netns_.AddNamespace("/var/run/netns/pod3");
  absl::StatusOr<AttachmentRecord> again = Attach(Request("c3", kPort0, "/var/run/netns/pod3"));
  ASSERT_OK(again);
}

TEST_F(AttachManagerTest, AfterRecoveryNoPortIsGivenTwice) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  Restart();
  netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> other = Attach(Request("c2", kPort0, kPod2));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace rocenet::attach
