// SPDX-License-Identifier: Apache-2.0
// Node on a Gaudi node whose sysfs shows a port back from a pod a moment
// after the move home: the DEL that moved it answers at once, and the next
// call (an ADD of that port) still finds it, because the loop waits for the
// port to show before it serves that call.
#include <functional>
#include <thread>

#include "daemon/server/node.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_netns.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/fakes/gaudi_tree.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::server {
namespace {

using ::rocenet::testing::AddGaudiDevice;
using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeFileSystem;
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

TEST(NodeHomeTest, TheCallBehindADelFindsThePortItBroughtHomeOnceSysfsShowsIt) {
  FakeSysfs fake;
  WatchedSysfs sysfs(&fake);
  AddGaudiDevice(fake, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
  FakeNetlink host;
  host.SetLink(testing::MakePhysicalLink(2, "so0"));
  FakeNetns netns(&host);
  netns.AddNamespace(kPod);
  FakeFileSystem fs;
  fs.AddDirectory("/run/rocenet");
  attach::Journal journal(&fs, "/run/rocenet/attachments.json");
  ASSERT_OK(journal.Load());
  attach::AttachManager manager(&host, &netns, &journal);
  inventory::PortInventory inventory(inventory::PortSelection{}, &sysfs);
  FakeClock clock;
  auto loop = os::EventLoop::Create();
  ASSERT_OK(loop);
  Node node(NodeParts{.loop = loop->get(), .netlink = &host, .clock = &clock,
                      .inventory = &inventory, .attach = &manager});
  ASSERT_OK(node.Start());
  std::thread thread([&] { ASSERT_OK((*loop)->Run()); });

  attach::AttachRequest request;
  request.container_id = "c1";
  request.netns = kPod;
  request.ifname = "net1";
  request.device_id = "0000:19:00.0-p8";
  request.cni_version = "1.1.0";
  request.pod = attach::PodIdentity{"training", "c1", "uid-c1"};
  ASSERT_OK(node.Attach(request, "L2"));
  // In the pod: the kernel takes the port out of the host's sysfs.
  auto hidden = (*loop)->Call<bool>([&]() -> absl::StatusOr<bool> {
    fake.Remove("devices/pci0000:17/0000:17:01.0/0000:19:00.0/net/so0");
    fake.Remove("class/net/so0");
    return true;
  });
  ASSERT_OK(hidden);

  // Home again, sysfs shows it only after 60 more reads: more than one pass
  // over the tree takes, fewer than the DEL's wait for it allows.
  int reads = 0;
  sysfs.on_read = [&] {
    if (++reads == 60) AddGaudiDevice(fake, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
  };
  auto detached = node.Detach("c1", "net1");
  ASSERT_OK(detached);
  EXPECT_TRUE(*detached);

  // Right behind the DEL: the port is there, and can be attached again.
  auto snapshot = node.Sample();
  EXPECT_GE(reads, 60) << "the call behind the DEL ran before the port showed in sysfs";
  ASSERT_OK(snapshot);
  ASSERT_EQ((*snapshot)->ports.size(), 1u);
  EXPECT_TRUE((*snapshot)->ports[0].present);
  request.container_id = "c2";
  EXPECT_OK(node.Attach(request, "L2"));

  sysfs.on_read = nullptr;
  node.Shutdown();
  (*loop)->Stop();
  thread.join();
}

}  // namespace
}  // namespace rocenet::server
