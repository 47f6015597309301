// SPDX-License-Identifier: Apache-2.0
// RDMA devices follow their ports into pods when the RDMA subsystem is in
// exclusive namespace mode: Attach moves the port, then its RDMA device;
// Detach, a rollback and the recovery after a crash bring the device home
// first, then the port; in shared mode nothing but the port moves. Against
// the stateful fake of the Rdma seam: this kernel has no RDMA.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/fakes/fake_rdma.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDevice[] = "mlx5_0";

class RdmaAttachTest : public AttachManagerTest {
 protected:
  RdmaAttachTest() {
    netns_.SetRdma(&rdma_);
    rdma_.SetMode(os::RdmaNetnsMode::kExclusive);
    rdma_.AddDevice(kDevice);
    rdma_.AddDevice("mlx5_1");
    ports_[0].rdma_device = kDevice;
    ports_[1].rdma_device = "mlx5_1";
    host_view_ = rdma_.ViewFrom(netns_.host().fd());
    host_rdma_ = host_view_.get();
    Restart();
  }

  int PodFd() {
    auto ns = netns_.Open(kPod);
    EXPECT_OK(ns);
    return ns.ok() ? (*ns)->fd() : -1;
  }
  int HostFd() const { return netns_.host().fd(); }

  testing::FakeRdma rdma_{netns_.host().fd()};
  std::unique_ptr<os::Rdma> host_view_;
};

TEST_F(RdmaAttachTest, AttachMovesThePortThenItsRdmaDevice) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  EXPECT_EQ(record->rdma_device, kDevice);
  EXPECT_EQ(rdma_.Where(kDevice), PodFd());
  EXPECT_EQ(rdma_.Where("mlx5_1"), HostFd());
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", 1002);
  // The journal knows, for a restarted rocenetd to bring it home.
  ASSERT_EQ(OnDisk().size(), 1u);
  EXPECT_EQ(OnDisk()[0].rdma_device, kDevice);
}

// The device went with its port: its state is read in the pod's namespace,
// where the host cannot see it.
TEST_F(RdmaAttachTest, TheRdmaPortStateIsReadWhereTheDeviceIs) {
  rdma_.SetPortState(kDevice, {.state = 4, .physical_state = 5});
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  EXPECT_EQ(host_rdma_->PortState(kDevice, 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->LiveRdmaPort(*record, kDevice, 1).status().code(),
            absl::StatusCode::kFailedPrecondition)
      << "not live yet";
  ASSERT_OK(manager_->Live(*record));
  absl::StatusOr<os::RdmaPortState> state = manager_->LiveRdmaPort(*record, kDevice, 1);
  ASSERT_OK(state);
  EXPECT_EQ(os::RdmaStateName(state->state), "ACTIVE");
  EXPECT_EQ(os::RdmaPhysicalStateName(state->physical_state), "LinkUp");
  rdma_.SetPortState(kDevice, {.state = 1, .physical_state = 3});
  state = manager_->LiveRdmaPort(*record, kDevice, 1);
  ASSERT_OK(state);
  EXPECT_EQ(os::RdmaStateName(state->state), "DOWN");
  EXPECT_EQ(os::RdmaPhysicalStateName(state->physical_state), "Disabled");
  EXPECT_EQ(manager_->LiveRdmaPort(*record, "mlx5_1", 1).status().code(),
            absl::StatusCode::kNotFound)
      << "the other device stayed in the host";
}

TEST_F(RdmaAttachTest, DetachBringsTheRdmaDeviceHomeFirst) {
  ASSERT_OK(Attach(Request()));
  // With the device's move home failing, the port must not have left either.
  rdma_.FailNextMove(absl::UnavailableError("Device or resource busy"));
  absl::StatusOr<bool> failed = manager_->Detach("c1", "net1");
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(),
              HasSubstr("move RDMA device mlx5_0 back to the host: Device or resource busy"));
  EXPECT_NE(Named(*pod_, "net1"), nullptr);
  EXPECT_EQ(rdma_.Where(kDevice), PodFd());
  ASSERT_EQ(OnDisk().size(), 1u);  // kept, to be tried again
  // Tried again: both home, device first.
  EXPECT_TRUE(*manager_->Detach("c1", "net1"));
  EXPECT_EQ(rdma_.Where(kDevice), HostFd());
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(RdmaAttachTest, AFailedRdmaMoveRollsThePortBack) {
  rdma_.FailNextMove(absl::PermissionDeniedError("Operation not permitted"));
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_FALSE(record.ok());
  EXPECT_THAT(record.status().message(),
              HasSubstr("move RDMA device mlx5_0 into the pod: Operation not permitted"));
  ExpectInHost("so0", so0_mac_, pod_);
  EXPECT_EQ(rdma_.Where(kDevice), HostFd());
  EXPECT_THAT(OnDisk(), IsEmpty());
}

TEST_F(RdmaAttachTest, SharedModeMovesOnlyThePort) {
  rdma_.SetMode(os::RdmaNetnsMode::kShared);
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  EXPECT_EQ(record->rdma_device, "");
  EXPECT_THAT(rdma_.moves(), IsEmpty());
  EXPECT_TRUE(*manager_->Detach("c1", "net1"));
  EXPECT_THAT(rdma_.moves(), IsEmpty());
}

TEST_F(RdmaAttachTest, RecoverAfterACrashBringsBothHome) {
  // Killed between the two moves of an attach, and after both; and during
  // a detach that had taken the device home but not yet the port.
  for (const char* when : {"port moved, device not", "both moved", "device home, port not"}) {
    SCOPED_TRACE(when);
    absl::StatusOr<AttachmentRecord> record = Attach(Request());
    ASSERT_OK(record);
    AttachmentRecord crashed = *record;
    const std::string moment = when;
    if (moment == "port moved, device not") {
      // Put the device back as if it had never moved.
      auto pod_view = rdma_.ViewFrom(PodFd());
      ASSERT_OK(pod_view->MoveDevice(kDevice, HostFd()));
      crashed.state = AttachState::kAttaching;
    } else if (moment == "both moved") {
      crashed.state = AttachState::kAttaching;
    } else {
      auto pod_view = rdma_.ViewFrom(PodFd());
      ASSERT_OK(pod_view->MoveDevice(kDevice, HostFd()));
      crashed.state = AttachState::kDetaching;
    }
    CrashWith({crashed});
    EXPECT_EQ(rdma_.Where(kDevice), HostFd());
    ExpectInHost("so0", so0_mac_, pod_);
    EXPECT_THAT(OnDisk(), IsEmpty());
  }
}

TEST_F(RdmaAttachTest, APodNamespaceThatDiesHandsTheDeviceBack) {
  ASSERT_OK(Attach(Request()));
  const int pod_fd = PodFd();
  netns_.DeleteNamespace(kPod);
  EXPECT_EQ(rdma_.Where(kDevice), HostFd());
  std::vector<AttachmentRecord> released = manager_->ReleaseDeadNamespaces();
  ASSERT_EQ(released.size(), 1u);
  // The kernel did it: the only move is the attach's.
  EXPECT_THAT(rdma_.moves(), ElementsAre(absl::StrCat(kDevice, "->", pod_fd)));
}

}  // namespace
}  // namespace rocenet::attach
