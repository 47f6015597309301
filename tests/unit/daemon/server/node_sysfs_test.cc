// SPDX-License-Identifier: Apache-2.0
// Node on a Gaudi node whose sysfs shows a net device a moment after the
// kernel announced it: the port is found without any further change.
#include <thread>

#include "daemon/server/node.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/fakes/gaudi_tree.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::server {
namespace {

using ::rocenet::testing::AddGaudiDevice;
using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;

TEST(NodeSysfsTest, APortSysfsShowsAfterItsLinkEventIsFoundWithoutAnotherEvent) {
  FakeSysfs sysfs;
  FakeNetlink netlink;
  FakeClock clock;
  AddGaudiDevice(sysfs, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
  netlink.SetLink(MakeLink(2, "so0"));
  inventory::PortInventory inventory(inventory::PortSelection{}, &sysfs);
  auto loop = os::EventLoop::Create();
  ASSERT_OK(loop);
  Node node(NodeParts{.loop = loop->get(), .netlink = &netlink, .clock = &clock,
                      .inventory = &inventory});
  ASSERT_OK(node.Start());
  std::thread thread([&] { ASSERT_OK((*loop)->Run()); });
  const uint64_t seen = node.changes().Latest().version;

  // so1 is announced by the kernel; sysfs shows it only after the event has
  // been read (as when a port comes back from a pod on a simulated node).
  auto announced = (*loop)->Call<bool>([&]() -> absl::StatusOr<bool> {
    netlink.SetLink(MakeLink(3, "so1"));
    return true;
  });
  ASSERT_OK(announced);
  absl::SleepFor(absl::Milliseconds(50));
  auto late = (*loop)->Call<bool>([&]() -> absl::StatusOr<bool> {
    AddGaudiDevice(sysfs, "pci0000:17", "0000:1a:00.0", 1, 0, {{"so1", 8}});
    return true;
  });
  ASSERT_OK(late);

  auto next = node.changes().WaitNewer(seen, absl::Seconds(5));
  ASSERT_NE(next.value, nullptr);
  ASSERT_EQ(next.value->ports.size(), 2u);
  EXPECT_EQ(next.value->ports[1].name, "so1");
  EXPECT_TRUE(next.value->ports[1].present);

  node.Shutdown();
  (*loop)->Stop();
  thread.join();
}

}  // namespace
}  // namespace rocenet::server
