// SPDX-License-Identifier: Apache-2.0
// Node's attachment calls on fakes and a FakeLoop: the inventory follows a
// port into a pod within the call that moved it, so a call queued behind it
// (from another thread, as gRPC's) finds the port in its pod, whatever the
// order in which the loop reads the kernel's event of the move and runs
// that call.
#include <thread>

#include "absl/synchronization/notification.h"
#include "daemon/node/node.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_netns.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeNetns;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kJournal[] = "/run/rocenet/attachments.json";
constexpr char kPod1[] = "/var/run/netns/pod1";
constexpr char kPod2[] = "/var/run/netns/pod2";

class NodeAttachTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.SetLink(testing::MakePhysicalLink(2, "so0"));
    pod1_ = &netns_.AddNamespace(kPod1);
    pod2_ = &netns_.AddNamespace(kPod2);
    fs_.AddDirectory("/run/rocenet");
    ASSERT_OK(journal_.Load());
    manager_ = std::make_unique<attach::AttachManager>(&host_, &netns_, &journal_,
                                                       /*rdma=*/nullptr, &reservations_);
    inventory::PortSelection selection;
    selection.gaudi = false;
    selection.interfaces = {"so*"};
    inventory_ = std::make_unique<inventory::PortInventory>(selection, &sysfs_);
    node_ = std::make_unique<Node>(NodeParts{.loop = &loop_,
                                             .netlink = &host_,
                                             .inventory = inventory_.get(),
                                             .attach = manager_.get()});
    ASSERT_OK(node_->Start());
    auto snapshot = node_->Current();
    ASSERT_OK(snapshot);
    ASSERT_EQ((*snapshot)->ports.size(), 1u);
    port_id_ = (*snapshot)->ports[0].id;
  }
  void TearDown() override { node_->Shutdown(); }

  attach::AttachRequest Request(const std::string& container, const std::string& netns) const {
    attach::AttachRequest request;
    request.container_id = container;
    request.netns = netns;
    request.ifname = "net1";
    request.device_id = port_id_;
    request.cni_version = "1.1.0";
    request.pod = attach::PodIdentity{"training", container, "uid-" + container};
    return request;
  }

  // Runs `first` with `second` started on another thread while `first` is
  // configuring the port inside pod1 (on the loop thread, after the move):
  // `second` is queued behind `first`, and the kernel's event of the move
  // is ready before it. The loop, on this thread, answers both.
  absl::StatusOr<attach::AttachmentRecord> AttachDuring(const std::function<void()>& first,
                                                        const attach::AttachRequest& second) {
    absl::StatusOr<attach::AttachmentRecord> result = absl::UnknownError("not run");
    std::thread other;
    bool started = false;
    pod1_->set_on_mutation([&](absl::string_view) {
      if (!started) {
        started = true;
        const size_t queued = loop_.queued();
        other = std::thread([&] { result = node_->Attach(second, "L2"); });
        // Until the other thread's call is queued.
        while (loop_.queued() == queued) absl::SleepFor(absl::Milliseconds(1));
      }
      return absl::OkStatus();
    });
    first();
    if (other.joinable()) other.join();
    pod1_->set_on_mutation(nullptr);
    EXPECT_TRUE(started) << "the first call changed nothing in pod1";
    return result;
  }

  FakeNetlink host_;
  FakeNetns netns_{&host_};
  FakeNetlink* pod1_ = nullptr;
  FakeNetlink* pod2_ = nullptr;
  FakeFileSystem fs_;
  attach::Journal journal_{&fs_, kJournal};
  attach::ReservationStore reservations_{&fs_, "/run/rocenet/reservations.json"};
  std::unique_ptr<attach::AttachManager> manager_;
  FakeSysfs sysfs_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  FakeLoop loop_;
  std::unique_ptr<Node> node_;
  std::string port_id_;
};

TEST_F(NodeAttachTest, APortJustMovedIntoAPodIsAttachedThereNotUnknown) {
  absl::StatusOr<attach::AttachmentRecord> second = AttachDuring(
      [&] { ASSERT_OK(node_->Attach(Request("c1", kPod1), "L2")); }, Request("c2", kPod2));
  // Busy (the CNI plugin's "try again later"), not "not a port of this node".
  EXPECT_THAT(second.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        HasSubstr("is attached to pod training/c1")));
  // Still known as a port of the node once everything has been read.
  loop_.RunUntilIdle();
  auto snapshot = node_->Current();
  ASSERT_OK(snapshot);
  ASSERT_EQ((*snapshot)->ports.size(), 1u);
  EXPECT_EQ((*snapshot)->ports[0].id, port_id_);
}

TEST_F(NodeAttachTest, APortJustBackFromAPodCanBeAttachedAgainAtOnce) {
  ASSERT_OK(node_->Attach(Request("c1", kPod1), "L2"));
  auto detached = node_->Detach("c1", "net1");
  ASSERT_OK(detached);
  EXPECT_TRUE(*detached);
  // The next allocation of the same port, right behind the DEL.
  auto again = node_->Attach(Request("c2", kPod2), "L2");
  ASSERT_OK(again);
  EXPECT_EQ(again->port_id, port_id_);
  EXPECT_EQ(again->netns, kPod2);
}

TEST_F(NodeAttachTest, AReservationByPortIdSteersAttachesWithoutADeviceId) {
  EXPECT_THAT(
      node_->Reserve(
          {.owner_uid = "claim", .owner = "", .pod_uids = {"uid-c2"}, .port_ids = {"nope"}}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"nope\" is not a port")));
  auto reserved = node_->Reserve({.owner_uid = "claim",
                                  .owner = "training/claim",
                                  .pod_uids = {"uid-c2"},
                                  .port_ids = {port_id_}});
  ASSERT_OK(reserved);
  EXPECT_EQ(reserved->created_unix, absl::ToUnixSeconds(loop_.Now()));
  // Readers see the reservation counted at once.
  EXPECT_EQ((*node_->Current())->reserved_ports, 1u);
  auto listed = node_->ListReservations();
  ASSERT_OK(listed);
  EXPECT_EQ(*listed, std::vector<attach::Reservation>{*reserved});

  attach::AttachRequest other = Request("c1", kPod1);
  other.device_id.clear();
  other.any_free_port = true;
  EXPECT_THAT(node_->Attach(other, "L2"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("is reserved by owner training/claim (uid claim)")));
  attach::AttachRequest mine = Request("c2", kPod2);
  mine.device_id.clear();
  auto attached = node_->Attach(mine, "L2");
  ASSERT_OK(attached);
  EXPECT_EQ(attached->port_id, port_id_);
  // ...and every attachment call answered before they read: one refused,
  // one done.
  auto current = node_->Current();
  ASSERT_OK(current);
  const AttachOperationStats& attaches =
      (*current)->attach.operations[static_cast<size_t>(AttachOperation::kAttach)];
  EXPECT_EQ(attaches.succeeded, 1u);
  EXPECT_EQ(attaches.failed, 1u);

  auto released = node_->ReleaseReservation("claim");
  ASSERT_OK(released);
  ASSERT_TRUE(released->has_value());
  EXPECT_EQ((*node_->Current())->reserved_ports, 0u);
  listed = node_->ListReservations();
  ASSERT_OK(listed);
  EXPECT_TRUE(listed->empty());
}

}  // namespace
}  // namespace rocenet::node
