// SPDX-License-Identifier: Apache-2.0
// The RDMA conditions: RdmaPortDown and GidMissing after their grace
// period, only while the link is up; RetransmitsRising from the transport
// events' rates, at once on retries exceeded, held for the quiet period,
// with a counter reset taken as a new baseline.
#include <string>
#include <vector>

#include "daemon/health/port_health.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/health/conditions_of.h"
#include "tests/unit/daemon/health/health_fixture.h"
#include "tests/unit/fakes/fake_clock.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using Strings = std::vector<std::string>;

inventory::RdmaInfo Active() {
  inventory::RdmaInfo rdma;
  rdma.device = "rxe0";
  rdma.port = 1;
  rdma.gid_index = 1;
  rdma.gid_ipv4 = "10.200.1.1";
  rdma.state = inventory::kRdmaPortActive;
  rdma.state_name = "ACTIVE";
  rdma.physical_state = 5;
  rdma.physical_state_name = "LinkUp";
  return rdma;
}

class RdmaHealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_[0].rdma = Active();
    signals_["if-so0"] = ReadySignals();
    signals_["if-so0"].address = "10.200.1.1";
  }
  Strings Look(absl::Duration after = absl::Seconds(5)) {
    clock_.Advance(after);
    tracker_.Update(ports_, signals_);
    return Conditions(tracker_);
  }
  inventory::Port& port() { return ports_[0]; }

  FakeClock clock_;
  HealthTracker tracker_{&clock_, ErrorsRisingPolicy{.sample_interval = absl::Seconds(10)}};
  std::vector<inventory::Port> ports_ = {UpPort("so0")};
  std::map<std::string, PortSignals> signals_;
};

TEST_F(RdmaHealthTest, AnActivePortWithItsGidIsHealthy) {
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Look(absl::Minutes(1)), Strings{});
}

TEST_F(RdmaHealthTest, PortDownWhileTheLinkIsUpAfterTheGrace) {
  port().rdma->state = 1;
  port().rdma->state_name = "DOWN";
  port().rdma->physical_state_name = "Disabled";
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Look(absl::Seconds(9)), Strings{});  // 9 s in
  EXPECT_EQ(Look(absl::Seconds(1)), Strings{"RdmaPortDown/PortNotActive"});
  const Condition& c = tracker_.node().ports[0].conditions[0];
  EXPECT_EQ(c.message,
            "port so0: RDMA port rxe0/1 is DOWN (physical state Disabled) while the link is "
            "up; RDMA traffic cannot use the port");
  EXPECT_FALSE(tracker_.node().ports[0].healthy);
  // The link goes down: LinkDown says it, not this.
  port().link.carrier = false;
  EXPECT_EQ(Look(), (Strings{"LinkDown/NoCarrier"}));
  // Back up with the RDMA port still down: a new grace.
  port().link.carrier = true;
  EXPECT_EQ(Look(), Strings{});
  port().rdma->state = inventory::kRdmaPortActive;
  EXPECT_EQ(Look(absl::Seconds(30)), Strings{});
}

TEST_F(RdmaHealthTest, AnUnknownStateIsNoCondition) {
  port().rdma->state = 0;
  port().rdma->state_name = "";
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Look(absl::Minutes(1)), Strings{});
}

TEST_F(RdmaHealthTest, GidMissingOnceTheKernelHadTimeToAddIt) {
  port().rdma->gid_index = -1;
  port().rdma->gid_ipv4 = "";
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Look(absl::Seconds(10)), Strings{"GidMissing/NoRoceV2Gid"});
  EXPECT_EQ(tracker_.node().ports[0].conditions[0].message,
            "port so0: rxe0/1 has no RoCE v2 GID for the port's address 10.200.1.1; RDMA "
            "connections to it cannot be made");
  // A GID of another address is no better.
  port().rdma->gid_ipv4 = "10.200.9.1";
  EXPECT_EQ(Look(), Strings{"GidMissing/NoRoceV2Gid"});
  port().rdma->gid_ipv4 = "10.200.1.1";
  EXPECT_EQ(Look(), Strings{});
}

TEST_F(RdmaHealthTest, NoGidExpectedWithoutAnAddressOrInAPod) {
  port().rdma->gid_ipv4 = "";
  signals_["if-so0"].address = "";
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Look(absl::Minutes(1)), Strings{});
  signals_["if-so0"].address = "10.200.1.1";
  port().attached_to = "/var/run/netns/pod";
  EXPECT_EQ(Look(absl::Minutes(1)), Strings{});
}

class RetransmitsTest : public RdmaHealthTest {
 protected:
  // Adds to the port's transport events and looks 10 s later.
  Strings Count(const std::map<std::string, uint64_t>& added) {
    for (const auto& [event, n] : added) port().events.transport[event] += n;
    return Look(absl::Seconds(10));
  }
};

TEST_F(RetransmitsTest, DefaultsAreNvSentinelsOneASecondAndAdvisory) {
  const RetransmitPolicy policy;
  EXPECT_EQ(policy.events_per_second, 1.0);
  EXPECT_EQ(policy.quiet_period, absl::Minutes(5));
  EXPECT_FALSE(policy.unhealthy);
}

TEST_F(RetransmitsTest, AboveOneASecondRaisesItAdvisoryAndQuietClearsIt) {
  port().events.transport = {{"sequence_error_nak", 100}, {"retry", 100}, {"out_of_sequence", 0}};
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Count({{"sequence_error_nak", 10}, {"retry", 10}}), Strings{});  // 1/s: not above
  EXPECT_EQ(Count({{"retry", 35}, {"sequence_error_nak", 12}}),
            Strings{"RetransmitsRising/Retransmitting"});
  const PortHealth& health = tracker_.node().ports[0];
  EXPECT_EQ(health.conditions[0].message,
            "port so0: 3.5 retry events a second over 10s (threshold 1); packets to or from "
            "the port are being lost: check FEC, the optics and drops on the lossless "
            "priorities");
  EXPECT_TRUE(health.healthy);  // advisory by default
  // Quiet for less than 5 minutes: held.
  for (int i = 0; i < 29; ++i) EXPECT_EQ(Count({}), Strings{"RetransmitsRising/Retransmitting"});
  EXPECT_EQ(Count({}), Strings{});
}

TEST_F(RetransmitsTest, RnrNaksAreTheApplicationsPaceNotLoss) {
  port().events.transport = {{"rnr_nak", 0}, {"rnr_retries_exceeded", 0}};
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Count({{"rnr_nak", 5000}, {"rnr_retries_exceeded", 3}}), Strings{});
}

TEST_F(RetransmitsTest, RetriesExceededRaisesItAtOnceAndUnhealthyByPolicy) {
  tracker_.SetRetransmitPolicy({.unhealthy = true});
  port().events.transport = {{"retries_exceeded", 0}, {"retry", 0}};
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Count({{"retries_exceeded", 1}}), Strings{"RetransmitsRising/RetriesExceeded"});
  EXPECT_FALSE(tracker_.node().ports[0].healthy);
  // A reload that makes it advisory applies to the raised condition.
  tracker_.SetRetransmitPolicy({});
  EXPECT_EQ(Count({}), Strings{"RetransmitsRising/RetriesExceeded"});
  EXPECT_TRUE(tracker_.node().ports[0].healthy);
}

// Gaudi's NIC zeroes its counters at every link up: a drop is a reset.
TEST_F(RetransmitsTest, ACounterThatWentBackIsANewBaseline) {
  port().events.transport = {{"out_of_sequence", 5000}};
  EXPECT_EQ(Look(), Strings{});
  port().events.transport = {{"out_of_sequence", 3}};
  EXPECT_EQ(Look(absl::Seconds(10)), Strings{});
  EXPECT_EQ(Count({{"out_of_sequence", 5}}), Strings{});
  EXPECT_EQ(Count({{"out_of_sequence", 50}}), Strings{"RetransmitsRising/Retransmitting"});
}

// A port moved into a pod whose RDMA device went with it: its counters
// cannot be read, no sample shows a resend, and what was raised before
// clears after the quiet period instead of holding for as long as the pod
// runs. Back in the host, its first sample is a new baseline.
TEST_F(RetransmitsTest, CountersThatCannotBeReadClearItAfterTheQuietPeriod) {
  port().events.transport = {{"ack_timeout", 0}};
  EXPECT_EQ(Look(), Strings{});
  EXPECT_EQ(Count({{"ack_timeout", 500}}), Strings{"RetransmitsRising/Retransmitting"});
  port().events.transport.clear();
  for (int i = 0; i < 29; ++i) {
    EXPECT_EQ(Look(absl::Seconds(10)), Strings{"RetransmitsRising/Retransmitting"}) << i;
  }
  EXPECT_EQ(Look(absl::Seconds(10)), Strings{});
  port().events.transport = {{"ack_timeout", 9000}};
  EXPECT_EQ(Look(absl::Seconds(10)), Strings{});
  EXPECT_EQ(Count({{"ack_timeout", 5}}), Strings{});
}

TEST_F(RetransmitsTest, SampledAtMostOnceAnInterval) {
  port().events.transport = {{"ack_timeout", 0}};
  EXPECT_EQ(Look(), Strings{});
  // 3 s after the sample: not a new interval, so no rate over 3 s.
  port().events.transport["ack_timeout"] = 20;
  EXPECT_EQ(Look(absl::Seconds(3)), Strings{});
  // The next sample sees 20 over 13 s: above 1/s.
  EXPECT_EQ(Look(absl::Seconds(10)), Strings{"RetransmitsRising/Retransmitting"});
}

}  // namespace
}  // namespace rocenet::health
