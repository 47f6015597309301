// SPDX-License-Identifier: Apache-2.0
// The planner against the host's own networks: a fabric subnet or route
// that overlaps a route of the host (not rocenet's, not the default) or a
// reserved network is refused, so the host's traffic never leaves by a
// scale-out port.
#include <string>
#include <vector>

#include "daemon/addressing/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/planner_test_util.h"

namespace rocenet::addressing {
namespace {

using ::testing::IsEmpty;

AddressPlan PlanWithHost(const PortInput& port, const std::vector<HostRoute>& host_routes,
                         const PlannerConfig& config = {}) {
  std::vector<AddressPlan> plans = PlanNode({port}, {}, host_routes, config);
  EXPECT_EQ(plans.size(), 1u);
  return plans.empty() ? AddressPlan() : plans.front();
}

TEST(PlannerHostNetworksTest, ASubnetInsideThePodNetworkIsRefused) {
  // OpenShift's default cluster network, routed by OVN-Kubernetes.
  const AddressPlan plan =
      PlanWithHost(Port("so0", "no-alert 10.128.3.2/30"), {{"ovn-k8s-mp0", P("10.128.0.0/14")}});
  ExpectHeld(plan, PlanState::kRefused, "HostNetworkOverlap",
             "port so0: subnet 10.128.3.0/30 lies inside the host's network 10.128.0.0/14 "
             "(routed via ovn-k8s-mp0, not by rocenet): the host's traffic there would leave by "
             "this port");
  // Nothing of the plan is kept: no address, no route, no MTU to apply.
  EXPECT_FALSE(plan.local.has_value());
  EXPECT_THAT(plan.routes, IsEmpty());
  EXPECT_EQ(plan.description, "no-alert 10.128.3.2/30");
}

TEST(PlannerHostNetworksTest, AFabricRouteCoveringAHostNetworkIsRefused) {
  // The /30 is clear, but the fabric's /16 would take the management /24.
  const AddressPlan plan =
      PlanWithHost(Port("so0", "no-alert 10.200.1.2/30"), {{"eno1", P("10.200.99.0/24")}});
  ExpectHeld(plan, PlanState::kRefused, "HostNetworkOverlap",
             "port so0: route 10.200.0.0/16 covers the host's network 10.200.99.0/24 (routed via "
             "eno1, not by rocenet): the host's traffic there would leave by this port");
}

TEST(PlannerHostNetworksTest, AStaticRouteEqualToAHostNetworkIsRefused) {
  PlannerConfig config;
  config.static_routes = {{P("172.30.0.0/16")}};
  ExpectHeld(
      PlanWithHost(Port("so0", "no-alert 10.200.1.2/30"), {{"br-ex", P("172.30.0.0/16")}}, config),
      PlanState::kRefused, "HostNetworkOverlap",
      "port so0: route 172.30.0.0/16 is the host's network 172.30.0.0/16 (routed via "
      "br-ex, not by rocenet): the host's traffic there would leave by this port");
}

TEST(PlannerHostNetworksTest, AReservedNetworkIsRefusedWithoutAnyRoute) {
  PlannerConfig config;
  config.reserved_networks = {P("172.30.0.0/16"), P("10.128.0.0/14")};
  ExpectHeld(PlanWithHost(Port("so0", "no-alert 10.129.0.2/30"), {}, config), PlanState::kRefused,
             "HostNetworkOverlap",
             "port so0: subnet 10.129.0.0/30 lies inside the reserved network 10.128.0.0/14 "
             "(addressing.reserved_networks)");
}

TEST(PlannerHostNetworksTest, ACleanPlanIsReadyBesideTheHostsNetworks) {
  PlannerConfig config;
  config.reserved_networks = {P("172.30.0.0/16"), P("10.128.0.0/14")};
  const AddressPlan plan = PlanWithHost(Port("so0", "no-alert 10.200.1.2/30"),
                                        {{"eno1", P("192.168.1.0/24")},
                                         {"ovn-k8s-mp0", P("10.128.0.0/14")},
                                         {"eno1", P("10.0.0.0/24")}},
                                        config);
  EXPECT_EQ(plan.state, PlanState::kReady) << plan.message;
  EXPECT_EQ(plan.local, P("10.200.1.1/30"));
}

TEST(PlannerHostNetworksTest, OnlyTheOverlappingPortIsHeld) {
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so0", "no-alert 10.200.1.2/30"), Port("so1", "no-alert 10.128.0.2/30")}, {},
               {{"ovn-k8s-mp0", P("10.128.0.0/14")}}, {});
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].state, PlanState::kReady) << plans[0].message;
  EXPECT_EQ(plans[1].reason, "HostNetworkOverlap");
}

TEST(PlannerHostNetworksTest, AReservedNetworkWithHostBitsIsAnInvalidConfig) {
  PlannerConfig config;
  config.reserved_networks = {P("10.128.1.0/14")};
  EXPECT_EQ(ValidatePlannerConfig(config).message(),
            "reserved_networks[0] 10.128.1.0/14 has host bits set; the network is 10.128.0.0/14");
}

}  // namespace
}  // namespace rocenet::addressing
