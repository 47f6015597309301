// SPDX-License-Identifier: Apache-2.0
// Which port an Attach takes, and why it takes none: by id, by PCI function
// or any free one, against fake kernels for the host and the pods.
#include <string>

#include "daemon/attach/manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(AttachManagerTest, APciAddressOfSeveralPortsTakesTheFirstFreeOne) {
  // Both ports on one PCI function, as a multi-port NIC has them.
  ports_[1].pci_address = ports_[0].pci_address;
  absl::StatusOr<AttachmentRecord> first = Attach(Request("c1", "0000:19:00.0"));
  ASSERT_OK(first);
  EXPECT_EQ(first->port_id, kPort0);

  netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> second = Attach(Request("c2", "0000:19:00.0", kPod2));
  ASSERT_OK(second);
  EXPECT_EQ(second->port_id, kPort1);

  const Footprint before = Snapshot();
  absl::StatusOr<AttachmentRecord> third = Attach(Request("c2", "0000:19:00.0", kPod2, "net2"));
  EXPECT_EQ(third.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(third.status().message()),
              HasSubstr("no free port on PCI function 0000:19:00.0: port 0000:19:00.0-p8 (so0) "
                        "is attached to pod training/worker-0 (container c1, net1); port "
                        "0000:1a:00.0-p8 (so1) is attached to pod training/worker-0 (container "
                        "c2, net1)"));
  before.ExpectUnchanged();
  EXPECT_EQ(OnDisk().size(), 2u);
}

// Under Kubernetes a pod that asked for no port must not get one behind
// kubelet's back: refused, naming the resource and the fix, with nothing
// taken; the same pod with a port asked for by id then gets it.
TEST_F(AttachManagerTest, NoDeviceIdNoReservationAndNoAnyFreePortIsRefusedTakingNothing) {
  const Footprint before = Snapshot();
  absl::StatusOr<AttachmentRecord> refused = Attach(Request("c1", ""));
  EXPECT_THAT(refused,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("deviceID: none given and no port reserved for pod "
                                 "training/worker-0 (uid uid-c1): ask for the port in the pod, "
                                 "with a limit of rocenet.io/scale-out-port")));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("\"anyFreePort\": true"));
  before.ExpectUnchanged();
  EXPECT_THAT(OnDisk(), IsEmpty());

  absl::StatusOr<AttachmentRecord> by_id = Attach(Request("c1", kPort1));
  ASSERT_OK(by_id);
  EXPECT_EQ(by_id->port_id, kPort1);
}

TEST_F(AttachManagerTest, AnyFreePortSkipsBusyAndUnprovisionedPorts) {
  absl::StatusOr<AttachmentRecord> first = Attach(AnyPort("c1"));
  ASSERT_OK(first);
  EXPECT_EQ(first->port_id, kPort0);

  FakeNetlink& pod2 = netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> second = Attach(AnyPort("c2", kPod2));
  ASSERT_OK(second);
  EXPECT_EQ(second->port_id, kPort1);
  EXPECT_EQ(second->table, 1000u + kSo1);
  EXPECT_EQ(Named(pod2, "net1")->mac, so1_mac_);
  EXPECT_THAT(pod2.addresses(),
              ElementsAre(os::AddressInfo{Named(pod2, "net1")->ifindex, P("10.200.2.1/30")}));
  EXPECT_EQ(OnDisk().size(), 2u);
}

TEST_F(AttachManagerTest, AnyFreePortTakesTheFirstProvisionedOne) {
  ports_[0].provisioned = false;
  absl::StatusOr<AttachmentRecord> record = Attach(AnyPort("c1"));
  ASSERT_OK(record);
  EXPECT_EQ(record->port_id, kPort1);
  EXPECT_NE(Named(host_, "so0"), nullptr);
}

TEST_F(AttachManagerTest, APortOfAnotherPodIsBusy) {
  ASSERT_OK(Attach(Request("c1")));
  netns_.AddNamespace(kPod2);
  const Footprint before = Snapshot();

  absl::StatusOr<AttachmentRecord> second = Attach(Request("c2", kPort0, kPod2));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("port 0000:19:00.0-p8 (so0) is attached to pod training/worker-0 "
                        "(container c1, net1)"));
  before.ExpectUnchanged();
  EXPECT_EQ(Named(*netns_.netlink(kPod2), "net1"), nullptr);
  EXPECT_EQ(OnDisk().size(), 1u);
}

TEST_F(AttachManagerTest, AnyFreePortTakesOnlyHealthyPortsAndSaysWhy) {
  ports_[0].healthy = false;
  ports_[0].conditions = "LinkDown/NoCarrier";
  absl::StatusOr<AttachmentRecord> first = Attach(AnyPort("c1"));
  ASSERT_OK(first);
  EXPECT_EQ(first->port_id, kPort1);
  netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> second = Attach(AnyPort("c2", kPod2));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("no free port: port 0000:19:00.0-p8 (so0) is not healthy "
                        "(LinkDown/NoCarrier); port 0000:1a:00.0-p8 (so1) is attached to pod"));
  // Asked for by id, as the device plugin's allocation does: taken anyway.
  absl::StatusOr<AttachmentRecord> by_id = Attach(Request("c2", kPort0, kPod2));
  EXPECT_OK(by_id);
}

TEST_F(AttachManagerTest, NoFreePortWhenAllAreTaken) {
  ASSERT_OK(Attach(AnyPort("c1")));
  ASSERT_OK(Attach(AnyPort("c1", kPod, "net2")));
  netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> third = Attach(AnyPort("c2", kPod2));
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(OnDisk().size(), 2u);
}

}  // namespace
}  // namespace rocenet::attach
