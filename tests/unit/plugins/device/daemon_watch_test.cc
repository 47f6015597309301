// SPDX-License-Identifier: Apache-2.0
// DaemonWatch over a fake node stream: one stream, one update per
// snapshot; the last health kept through a short outage and dropped after
// the grace period; reconnects backing off, and back to the first step once
// the daemon answers again; a prompt stop.
#include "plugins/device/daemon_watch.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_node_client.h"

namespace rocenet::device {
namespace {

using ::rocenet::testing::FakeNodeClient;
using ::rocenet::testing::ScriptedStream;

rocenet::v1::PortSnapshot Snapshot(uint64_t generation, bool healthy) {
  rocenet::v1::PortSnapshot s;
  s.set_generation(generation);
  rocenet::v1::Port* port = s.add_ports();
  port->set_id("0000:19:00.0-p8");
  port->set_name("so0");
  port->set_present(true);
  port->set_rail(-1);
  port->set_rail_name("10.200.0.0/16");
  rocenet::v1::PortHealth* health = s.mutable_health()->add_ports();
  health->set_port_id(port->id());
  health->set_healthy(healthy);
  s.mutable_addressing()->set_mode("L3");
  rocenet::v1::PortPlan* plan = s.mutable_addressing()->add_plans();
  plan->set_port_id(port->id());
  plan->set_state(rocenet::v1::PLAN_STATE_READY);
  plan->set_local("10.200.1.1/30");
  plan->add_routes()->set_destination("10.200.0.0/16");
  rocenet::v1::PortNeighbors* neighbors = s.add_neighbors();
  neighbors->set_port_id(port->id());
  neighbors->add_neighbors()->mutable_chassis_id()->set_value("leaf-1");
  return s;
}

// Polls `done` up to `timeout`; what the watch thread does takes its time.
bool Eventually(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return done();
}

DaemonWatchOptions Fast(absl::Duration grace = absl::Seconds(30)) {
  DaemonWatchOptions options;
  options.socket = "/run/test/rocenetd.sock";
  options.grace = grace;
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(40);
  return options;
}

TEST(DaemonWatchTest, EverySnapshotIsOneUpdateFromOneStream) {
  FakeNodeClient client;
  client.Script(
      {.snapshots = {Snapshot(1, true), Snapshot(2, false), Snapshot(3, true)}, .hold = true});
  DeviceState state;
  DaemonWatch watch(Fast(), &client, &state);
  watch.Start();
  ASSERT_TRUE(Eventually([&] { return state.Get().generation == 3; }));
  const DeviceSnapshot got = state.Get();
  ASSERT_EQ(got.ports.size(), 1u);
  const PortInfo& so0 = got.ports.at("0000:19:00.0-p8");
  EXPECT_TRUE(so0.healthy);
  EXPECT_EQ(so0.local, "10.200.1.1/30");
  EXPECT_EQ(so0.rail, "10.200.0.0/16") << "ports, plans and health come on the stream";
  watch.Stop();
  EXPECT_EQ(client.watch_calls(), 1) << "no other call was made for the three updates";
}

TEST(DaemonWatchTest, AShortOutageKeepsTheLastHealthALongOneLosesIt) {
  FakeNodeClient client;
  client.Script({.snapshots = {Snapshot(1, true)}, .hold = true});
  DeviceState state;
  DaemonWatch watch(Fast(/*grace=*/absl::Milliseconds(300)), &client, &state);
  watch.Start();
  ASSERT_TRUE(Eventually([&] { return state.Get().generation == 1; }));
  client.EndHeld();  // the daemon stops; nothing answers after it
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(state.Get().daemon_lost) << "within the grace period";
  EXPECT_TRUE(state.Get().ports.at("0000:19:00.0-p8").healthy);
  ASSERT_TRUE(Eventually([&] { return state.Get().daemon_lost; }));
  // Back: one snapshot clears it.
  client.Script({.snapshots = {Snapshot(2, true)}, .hold = true});
  ASSERT_TRUE(Eventually([&] { return !state.Get().daemon_lost; }));
  watch.Stop();
}

TEST(DaemonWatchTest, ADaemonBackJustBeforeTheGraceEndsIsNeverLost) {
  FakeNodeClient client;
  client.Script({.snapshots = {Snapshot(1, true)}, .hold = true});
  DeviceState state;
  DaemonWatchOptions options = Fast(/*grace=*/absl::Seconds(1));
  options.initial_backoff = absl::Milliseconds(600);
  options.max_backoff = absl::Seconds(5);
  DaemonWatch watch(options, &client, &state);
  watch.Start();
  ASSERT_TRUE(Eventually([&] { return state.Get().generation == 1; }));
  // The stream ends; the first retry (at 600 ms) finds nothing; the daemon
  // is back at 800 ms, before the grace ends at 1 s, where the next attempt
  // finds it. The backoff alone would come back only at 1.8 s.
  const absl::Time t0 = absl::Now();
  client.EndHeld();
  absl::SleepFor(absl::Milliseconds(800));
  client.Script({.snapshots = {Snapshot(2, true)}, .hold = true});
  while (absl::Now() - t0 < absl::Milliseconds(2200)) {
    ASSERT_FALSE(state.Get().daemon_lost) << "at " << absl::FormatDuration(absl::Now() - t0);
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(state.Get().generation, 2u);
  watch.Stop();
}

TEST(DaemonWatchTest, ADaemonNeverReachedIsLostAfterTheGrace) {
  FakeNodeClient client;
  DeviceState state;
  DaemonWatch watch(Fast(/*grace=*/absl::Milliseconds(100)), &client, &state);
  watch.Start();
  ASSERT_TRUE(Eventually([&] { return state.Get().daemon_lost; }));
  watch.Stop();
}

TEST(DaemonWatchTest, ReconnectsBackOffAndStartOverAfterASuccess) {
  FakeNodeClient client;
  DeviceState state;
  DaemonWatchOptions options = Fast();
  options.max_backoff = absl::Milliseconds(80);
  DaemonWatch watch(options, &client, &state);
  watch.Start();
  ASSERT_TRUE(Eventually([&] { return client.watch_calls() >= 5; }));
  client.Script({.snapshots = {Snapshot(1, true)}});  // answers once, then ends
  ASSERT_TRUE(Eventually([&] { return state.Get().generation == 1; }));
  ASSERT_TRUE(Eventually([&] { return client.watch_calls() >= client.scripted_calls()[0] + 3; }));
  watch.Stop();
  const std::vector<absl::Time> times = client.watch_times();
  // Each wait at least doubles, up to the most: 10, 20, 40, 80 ms.
  const absl::Duration expected[] = {absl::Milliseconds(10), absl::Milliseconds(20),
                                     absl::Milliseconds(40), absl::Milliseconds(80)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(times[i + 1] - times[i], expected[i] - absl::Milliseconds(1)) << i;
  }
  // After the success the first wait is the first step again, not 80 ms.
  ASSERT_EQ(client.scripted_calls().size(), 1u);
  const int success = client.scripted_calls()[0];
  ASSERT_LT(success + 2, static_cast<int>(times.size()));
  EXPECT_LT(times[success + 2] - times[success + 1], absl::Milliseconds(70));
}

TEST(DaemonWatchTest, StopEndsAHeldStreamPromptly) {
  FakeNodeClient client;
  client.Script({.snapshots = {Snapshot(1, true)}, .hold = true});
  DeviceState state;
  DaemonWatch watch(Fast(), &client, &state);
  watch.Start();
  ASSERT_TRUE(Eventually([&] { return state.Get().generation == 1; }));
  const absl::Time t0 = absl::Now();
  watch.Stop();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(2));
  EXPECT_FALSE(state.Get().daemon_lost) << "a stop is not a lost daemon";
}

}  // namespace
}  // namespace rocenet::device
