// SPDX-License-Identifier: Apache-2.0
// Node on a Gaudi node whose sysfs shows a port back from a pod a moment
// after the move home: the DEL that moved it answers at once, and the next
// call (an ADD of that port) still finds it, because the node holds that
// call until the port shows (or its wait for it is over), while the loop
// goes on.
#include <functional>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "daemon/node/node.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_netns.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/fakes/gaudi_tree.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::AddGaudiDevice;
using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeNetns;
using ::rocenet::testing::FakeSysfs;

constexpr char kPod[] = "/var/run/netns/pod1";

// A FakeSysfs that calls `on_read` before every read (on the loop thread).
class WatchedSysfs final : public os::Sysfs {
 public:
  explicit WatchedSysfs(FakeSysfs* sysfs) : sysfs_(sysfs) {}
  absl::StatusOr<std::string> ReadAttribute(absl::string_view path) const override {
    Touch();
    return sysfs_->ReadAttribute(path);
  }
  absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const override {
    Touch();
    return sysfs_->ListDirectory(path);
  }
  absl::StatusOr<std::string> Resolve(absl::string_view path) const override {
    Touch();
    return sysfs_->Resolve(path);
  }
  std::function<void()> on_read;

 private:
  void Touch() const {
    if (on_read) on_read();
  }
  FakeSysfs* sysfs_;
};

class NodeHomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddGaudiDevice(fake_, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
    host_.SetLink(testing::MakePhysicalLink(2, "so0"));
    netns_.AddNamespace(kPod);
    fs_.AddDirectory("/run/rocenet");
    ASSERT_OK(journal_.Load());
    node_ = std::make_unique<Node>(NodeParts{
        .loop = &loop_, .netlink = &host_, .inventory = &inventory_, .attach = &manager_});
    ASSERT_OK(node_->Start());
    loop_.RunUntilIdle();
  }
  void TearDown() override {
    sysfs_.on_read = nullptr;
    node_->Shutdown();
  }

  attach::AttachRequest Request(const std::string& container) const {
    attach::AttachRequest request;
    request.container_id = container;
    request.netns = kPod;
    request.ifname = "net1";
    request.device_id = "0000:19:00.0-p8";
    request.cni_version = "1.1.0";
    request.pod = attach::PodIdentity{"training", container, "uid-" + container};
    return request;
  }

  // Attaches the port to c1; in the pod the kernel takes it out of the
  // host's sysfs.
  void AttachAndHide() {
    ASSERT_OK(node_->Attach(Request("c1"), "L2"));
    fake_.Remove("devices/pci0000:17/0000:17:01.0/0000:19:00.0/net/so0");
    fake_.Remove("class/net/so0");
  }

  FakeSysfs fake_;
  WatchedSysfs sysfs_{&fake_};
  FakeNetlink host_;
  FakeNetns netns_{&host_};
  FakeFileSystem fs_;
  attach::Journal journal_{&fs_, "/run/rocenet/attachments.json"};
  attach::AttachManager manager_{&host_, &netns_, &journal_};
  inventory::PortInventory inventory_{inventory::PortSelection{}, &sysfs_};
  FakeLoop loop_;
  std::unique_ptr<Node> node_;
};

TEST_F(NodeHomeTest, TheCallBehindADelFindsThePortItBroughtHomeOnceSysfsShowsIt) {
  AttachAndHide();
  // Home again, sysfs shows it only after 60 more reads: more than one pass
  // over the tree takes, fewer than the DEL's wait for it allows.
  int reads = 0;
  sysfs_.on_read = [&] {
    if (++reads == 60) AddGaudiDevice(fake_, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
  };
  const absl::Time start = loop_.Now();
  auto detached = node_->Detach("c1", "net1");
  ASSERT_OK(detached);
  EXPECT_TRUE(*detached);
  // The DEL answered before the port showed, and took no time of the loop.
  EXPECT_LT(reads, 60);
  EXPECT_EQ(loop_.Now(), start);

  // Right behind the DEL, an ADD of the same port: it waits until the
  // port is there, and gets it.
  auto again = node_->Attach(Request("c2"), "L2");
  EXPECT_GE(reads, 60) << "the call behind the DEL ran before the port showed in sysfs";
  EXPECT_GT(loop_.Now(), start);
  EXPECT_LT(loop_.Now(), start + absl::Milliseconds(50));
  ASSERT_OK(again);
  EXPECT_EQ(again->port_id, "0000:19:00.0-p8");
}

TEST_F(NodeHomeTest, APortThatNeverShowsEndsTheWaitAndTheHeldCallsAreAnswered) {
  AttachAndHide();
  const absl::Time start = loop_.Now();
  ASSERT_OK(node_->Detach("c1", "net1"));
  // sysfs does not show it: the call behind the DEL is answered once the
  // wait is over, and nothing is held after it.
  ASSERT_OK(node_->ListAttachments());
  EXPECT_GE(loop_.Now(), start + absl::Milliseconds(50));
  EXPECT_LT(loop_.Now(), start + absl::Milliseconds(51));
  const absl::Time after = loop_.Now();
  ASSERT_OK(node_->ListAttachments());
  EXPECT_EQ(loop_.Now(), after);
  // Not in sysfs, the link is no Gaudi port (yet): the node's look 300 ms
  // after a link appears, or the next event, finds it when it shows.
  loop_.RunUntilIdle();
  auto snapshot = node_->Current();
  ASSERT_OK(snapshot);
  EXPECT_TRUE((*snapshot)->ports.empty());
}

TEST_F(NodeHomeTest, CallsHeldByTheWaitAreAnsweredInOrder) {
  AttachAndHide();
  int reads = 0;
  sysfs_.on_read = [&] {
    if (++reads == 60) AddGaudiDevice(fake_, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
  };
  ASSERT_OK(node_->Detach("c1", "net1"));
  // Two callers on other threads queue behind the DEL: an ADD for c2, then
  // one for c3 of the same port, which must find it taken by c2.
  absl::StatusOr<attach::AttachmentRecord> c2 = absl::UnknownError("not run");
  absl::StatusOr<attach::AttachmentRecord> c3 = absl::UnknownError("not run");
  absl::Notification answered;
  std::thread first([&] { c2 = node_->Attach(Request("c2"), "L2"); });
  while (loop_.queued() < 1) absl::SleepFor(absl::Milliseconds(1));
  std::thread second([&] {
    c3 = node_->Attach(Request("c3"), "L2");
    answered.Notify();
  });
  while (loop_.queued() < 2) absl::SleepFor(absl::Milliseconds(1));
  // The loop (this thread) serves them as time passes, c2's first.
  for (int step = 0; step < 1000 && !answered.HasBeenNotified(); ++step) {
    loop_.Advance(absl::Microseconds(250));
  }
  first.join();
  second.join();
  ASSERT_OK(c2);
  EXPECT_EQ(c2->netns, kPod);
  EXPECT_EQ(c3.status().code(), absl::StatusCode::kFailedPrecondition) << c3.status();
}

TEST_F(NodeHomeTest, ShutdownAnswersTheHeldCallsUnavailable) {
  AttachAndHide();
  ASSERT_OK(node_->Detach("c1", "net1"));
  absl::StatusOr<std::vector<attach::AttachmentRecord>> held = absl::UnknownError("not run");
  std::thread caller([&] { held = node_->ListAttachments(); });
  while (loop_.queued() < 1) absl::SleepFor(absl::Milliseconds(1));
  loop_.RunUntilIdle();  // the call is held: the port is not home
  loop_.Stop();
  node_->Shutdown();
  caller.join();
  EXPECT_EQ(held.status().code(), absl::StatusCode::kUnavailable) << held.status();
}

}  // namespace
}  // namespace rocenet::node
