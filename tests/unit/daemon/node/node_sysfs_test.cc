// SPDX-License-Identifier: Apache-2.0
// Node on a Gaudi node whose sysfs shows a net device a moment after the
// kernel announced it: the port is found without any further change.
#include "daemon/node/node.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/fakes/gaudi_tree.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::AddGaudiDevice;
using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;

TEST(NodeSysfsTest, APortSysfsShowsAfterItsLinkEventIsFoundWithoutAnotherEvent) {
  FakeSysfs sysfs;
  FakeNetlink netlink;
  FakeLoop loop;
  AddGaudiDevice(sysfs, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
  netlink.SetLink(MakeLink(2, "so0"));
  inventory::PortInventory inventory(inventory::PortSelection{}, &sysfs);
  Node node(NodeParts{.loop = &loop, .netlink = &netlink, .inventory = &inventory});
  ASSERT_OK(node.Start());
  loop.RunUntilIdle();
  const uint64_t seen = node.changes().Latest().version;

  // so1 is announced by the kernel; sysfs shows it only after the event has
  // been read (as when a port comes back from a pod on a simulated node).
  netlink.SetLink(MakeLink(3, "so1"));
  loop.RunUntilIdle();
  EXPECT_EQ(node.changes().Latest().value->ports.size(), 1u);
  loop.Advance(absl::Milliseconds(50));
  AddGaudiDevice(sysfs, "pci0000:17", "0000:1a:00.0", 1, 0, {{"so1", 8}});

  // Found by the second look the node takes on its own, with no event.
  loop.Advance(absl::Milliseconds(250));
  auto next = node.changes().Latest();
  ASSERT_GT(next.version, seen);
  ASSERT_EQ(next.value->ports.size(), 2u);
  EXPECT_EQ(next.value->ports[1].name, "so1");
  EXPECT_TRUE(next.value->ports[1].present);
  node.Shutdown();
}

}  // namespace
}  // namespace rocenet::node
