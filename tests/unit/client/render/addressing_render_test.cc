// SPDX-License-Identifier: Apache-2.0
#include "client/render/addressing_render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::PortPlan Ready() {
  v1::PortPlan plan;
  plan.set_port_id("0000:19:00.0-p8");
  plan.set_name("so0");
  plan.set_state(v1::PLAN_STATE_READY);
  plan.set_description("no-alert 10.200.1.2/30");
  plan.set_local("10.200.1.1/30");
  plan.set_peer("10.200.1.2");
  v1::Route* route = plan.add_routes();
  route->set_destination("10.200.0.0/16");
  route->set_gateway("10.200.1.2");
  plan.set_mtu(8000);
  plan.set_gateway_mac("02:5e:00:ff:00:01");
  plan.set_provisioned(true);
  plan.mutable_applied()->set_local("10.200.1.1/30");
  plan.mutable_applied()->set_mtu(8000);
  return plan;
}

v1::PortPlan Refused() {
  v1::PortPlan plan;
  plan.set_port_id("0000:19:00.0-p22");
  plan.set_name("so1");
  plan.set_state(v1::PLAN_STATE_REFUSED);
  plan.set_reason("PeerIsNetworkAddress");
  plan.set_message("port so1: peer 10.200.2.0/30 is the network address of its subnet");
  plan.set_description("no-alert 10.200.2.0/30");
  return plan;
}

v1::PortPlan Pending() {
  v1::PortPlan plan;
  plan.set_name("so2");
  plan.set_state(v1::PLAN_STATE_PENDING);
  plan.set_reason("NoLldpNeighbor");
  plan.set_message("port so2: no LLDP neighbor");
  return plan;
}

v1::ListPlansResponse SamplePlans() {
  v1::ListPlansResponse plans;
  plans.set_mode("L3");
  *plans.add_plans() = Ready();
  *plans.add_plans() = Refused();
  *plans.add_plans() = Pending();
  return plans;
}

TEST(RenderPlansTest, TableThenRefusalsInFull) {
  EXPECT_EQ(RenderPlans(SamplePlans(), /*wide=*/false),
            "mode: L3, 1/3 ports provisioned\n"
            "PORT   STATE     LOCAL           PEER         ROUTES          PROVISIONED   REASON\n"
            "so0    ready     10.200.1.1/30   10.200.1.2   10.200.0.0/16   yes           -\n"
            "so1    refused   -               -            -               no            "
            "PeerIsNetworkAddress\n"
            "so2    pending   -               -            -               no            "
            "NoLldpNeighbor\n"
            "\n"
            "Problems:\n"
            "  refused: port so1: peer 10.200.2.0/30 is the network address of its subnet "
            "(PeerIsNetworkAddress)\n"
            "    the switch sent Port Description \"no-alert 10.200.2.0/30\"\n");
}

TEST(RenderPlansTest, NoProblemsNoSection) {
  v1::ListPlansResponse plans;
  plans.set_mode("L3");
  *plans.add_plans() = Ready();
  EXPECT_THAT(RenderPlans(plans, /*wide=*/false), Not(HasSubstr("Problems")));
}

TEST(RenderPlansTest, ApplyErrorIsAProblemNamingThePort) {
  v1::ListPlansResponse plans = SamplePlans();
  v1::PortPlan* so0 = plans.mutable_plans(0);
  so0->set_provisioned(false);
  so0->set_apply_error("port so0: add route 10.200.0.0/16: Network is unreachable");
  plans.mutable_plans(2)->set_apply_error("record applied state: disk full");
  const std::string text = RenderPlans(plans, /*wide=*/false);
  EXPECT_THAT(text, HasSubstr("mode: L3, 0/3 ports provisioned\n"));
  EXPECT_THAT(text, HasSubstr("\n  not applied: port so0: add route 10.200.0.0/16: Network is "
                              "unreachable\n"));
  EXPECT_THAT(text, HasSubstr("\n  not applied: port so2: record applied state: disk full\n"));
}

TEST(RenderPlansTest, WideHasTheDetailsInColumns) {
  const std::string text = RenderPlans(SamplePlans(), /*wide=*/true);
  EXPECT_THAT(text, HasSubstr("   REASON                 MTU    GATEWAY MAC         APPLIED"));
  EXPECT_THAT(text, HasSubstr("   8000   02:5e:00:ff:00:01   10.200.1.1/30 mtu 8000   "
                              "\"no-alert 10.200.1.2/30\"   -\n"));
  EXPECT_THAT(text, HasSubstr("\"no-alert 10.200.2.0/30\"   port so1: peer 10.200.2.0/30 is the "
                              "network address of its subnet\n"));
  EXPECT_THAT(text, Not(HasSubstr("Problems")));
}

TEST(RenderPlanTest, AddressKeptAfterTheNeighborWentIsShown) {
  v1::PortPlan plan = Pending();
  plan.set_provisioned(true);
  plan.mutable_applied()->set_local("10.200.3.1/30");
  plan.mutable_applied()->set_peer("10.200.3.2");
  EXPECT_EQ(RenderPlan(plan, /*wide=*/false),
            "PORT   STATE     LOCAL                  PEER   ROUTES   PROVISIONED   REASON\n"
            "so2    pending   10.200.3.1/30 (kept)   -      -        yes           "
            "NoLldpNeighbor\n");
}

TEST(RenderPlanTest, OnePortWithoutModeLine) {
  const std::string text = RenderPlan(Refused(), /*wide=*/false);
  EXPECT_THAT(text, ::testing::StartsWith("PORT   STATE     LOCAL"));
  EXPECT_THAT(text, HasSubstr("  refused: port so1: peer 10.200.2.0/30"));
  EXPECT_THAT(text, Not(HasSubstr("mode:")));
}

TEST(RoutesTextTest, GatewayShownOnlyWhenNotThePeer) {
  google::protobuf::RepeatedPtrField<v1::Route> routes;
  EXPECT_EQ(RoutesText(routes, "10.200.1.2"), "-");
  v1::Route* routed = routes.Add();
  routed->set_destination("10.200.0.0/16");
  routed->set_gateway("10.200.1.2");
  v1::Route* other = routes.Add();
  other->set_destination("10.201.0.0/16");
  other->set_gateway("10.200.1.6");
  routes.Add()->set_destination("10.200.1.0/30");
  EXPECT_EQ(RoutesText(routes, "10.200.1.2"),
            "10.200.0.0/16, 10.201.0.0/16 via 10.200.1.6, 10.200.1.0/30 (link)");
}

TEST(PlanStateTextTest, Names) {
  EXPECT_EQ(PlanStateText(v1::PLAN_STATE_PENDING), "pending");
  EXPECT_EQ(PlanStateText(v1::PLAN_STATE_READY), "ready");
  EXPECT_EQ(PlanStateText(v1::PLAN_STATE_REFUSED), "refused");
  EXPECT_EQ(PlanStateText(v1::PLAN_STATE_L2), "L2");
  EXPECT_EQ(PlanStateText(v1::PLAN_STATE_UNSPECIFIED), "-");
}

}  // namespace
}  // namespace rocenet::rocectl
