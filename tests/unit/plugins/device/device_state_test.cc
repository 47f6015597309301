// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/device_state.h"

#include <thread>

#include "gtest/gtest.h"

namespace rocenet::device {
namespace {

PortInfo Port(const std::string& id, int numa_node, bool healthy) {
  PortInfo p;
  p.id = id;
  p.numa_node = numa_node;
  p.present = true;
  p.healthy = healthy;
  return p;
}

PortMap TwoPorts(bool second_healthy) {
  PortMap ports;
  ports["b"] = Port("b", 1, second_healthy);
  ports["a"] = Port("a", -1, true);
  return ports;
}

TEST(ToListAndWatch, EveryPortSortedWithHealthAndNuma) {
  DeviceState state;
  state.Update(TwoPorts(false));
  v1beta1::ListAndWatchResponse r = ToListAndWatch(state.Get());
  ASSERT_EQ(r.devices_size(), 2);
  EXPECT_EQ(r.devices(0).id(), "a");
  EXPECT_EQ(r.devices(0).health(), kHealthy);
  EXPECT_FALSE(r.devices(0).has_topology());  // NUMA unknown
  EXPECT_EQ(r.devices(1).id(), "b");
  EXPECT_EQ(r.devices(1).health(), kUnhealthy);
  ASSERT_EQ(r.devices(1).topology().nodes_size(), 1);
  EXPECT_EQ(r.devices(1).topology().nodes(0).id(), 1);
}

TEST(ToListAndWatch, AbsentPortIsUnhealthy) {
  PortMap ports = TwoPorts(true);
  ports["a"].present = false;
  DeviceState state;
  state.Update(ports);
  EXPECT_EQ(ToListAndWatch(state.Get()).devices(0).health(), kUnhealthy);
}

TEST(DeviceState, AnAllocatedDeviceTheDaemonStopsListingStaysListedUnhealthy) {
  DeviceState state;
  state.Update(TwoPorts(true));
  state.NoteAllocated({"b"});
  state.Update(PortMap{{"c", Port("c", 0, true)}});
  v1beta1::ListAndWatchResponse r = ToListAndWatch(state.Get());
  ASSERT_EQ(r.devices_size(), 2);  // "a" was never allocated: it may go
  EXPECT_EQ(r.devices(0).id(), "b");
  EXPECT_EQ(r.devices(0).health(), kUnhealthy);
  EXPECT_EQ(r.devices(0).topology().nodes(0).id(), 1);  // as last known
  EXPECT_EQ(r.devices(1).id(), "c");

  // Listed again by the daemon: its own state again.
  state.Update(TwoPorts(true));
  EXPECT_EQ(ToListAndWatch(state.Get()).devices(1).health(), kHealthy);
}

TEST(DeviceState, APortMovingBetweenNamespacesKeepsItsMac) {
  DeviceState state;
  PortMap ports = TwoPorts(true);
  ports["a"].mac = "02:00:00:00:00:0a";
  state.Update(ports);
  ports["a"].mac = "";  // no link the daemon can read, for a moment
  state.Update(ports);
  EXPECT_EQ(state.Get().ports.at("a").mac, "02:00:00:00:00:0a");
  ports["a"].mac = "02:00:00:00:00:0b";  // a MAC that did change is taken
  state.Update(ports);
  EXPECT_EQ(state.Get().ports.at("a").mac, "02:00:00:00:00:0b");
}

TEST(DeviceState, DaemonLostMakesEverythingUnhealthyUntilNextUpdate) {
  DeviceState state;
  state.Update(TwoPorts(true));
  state.SetDaemonLost();
  v1beta1::ListAndWatchResponse lost = ToListAndWatch(state.Get());
  ASSERT_EQ(lost.devices_size(), 2);  // still listed: kubelet keeps them known
  for (const auto& d : lost.devices()) EXPECT_EQ(d.health(), kUnhealthy);
  state.Update(TwoPorts(true));
  v1beta1::ListAndWatchResponse back = ToListAndWatch(state.Get());
  for (const auto& d : back.devices()) EXPECT_EQ(d.health(), kHealthy);
}

TEST(DeviceState, AResendWakesTheStreamsWithTheSameList) {
  DeviceState state;
  state.Update(TwoPorts(true));
  const DeviceSnapshot before = state.Get();
  state.Resend();
  const DeviceSnapshot after = state.WaitNewer(before.generation, absl::Seconds(10));
  EXPECT_GT(after.generation, before.generation);
  EXPECT_EQ(after.resends, before.resends + 1);
  EXPECT_EQ(ToListAndWatch(after).SerializeAsString(), ToListAndWatch(before).SerializeAsString());
}

TEST(DeviceState, WaitNewerWakesOnUpdateAndTimesOut) {
  DeviceState state;
  uint64_t g = state.Get().generation;
  EXPECT_EQ(state.WaitNewer(g, absl::Milliseconds(10)).generation, g);
  std::thread writer([&] { state.Update(TwoPorts(true)); });
  DeviceSnapshot s = state.WaitNewer(g, absl::Seconds(10));
  writer.join();
  EXPECT_GT(s.generation, g);
  state.Shutdown();
  EXPECT_TRUE(state.WaitNewer(s.generation, absl::Seconds(10)).shut_down);
}

}  // namespace
}  // namespace rocenet::device
