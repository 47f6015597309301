// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/plan_convert.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/api/fake_node_state.h"

namespace rocenet::api {
namespace {

using ::rocenet::api::testing::SampleSnapshot;

TEST(PlanConvertTest, ReadyPlanWithWhatIsApplied) {
  v1::ListPlansResponse response;
  ToProto(SampleSnapshot(), &response);
  EXPECT_EQ(response.mode(), "L3");
  ASSERT_EQ(response.plans_size(), 3);
  const v1::PortPlan& plan = response.plans(0);
  EXPECT_EQ(plan.port_id(), "0000:19:00.0-p8");
  EXPECT_EQ(plan.name(), "so0");
  EXPECT_EQ(plan.state(), v1::PLAN_STATE_READY);
  EXPECT_EQ(plan.reason(), "");
  EXPECT_EQ(plan.description(), "no-alert 10.200.1.2/30");
  EXPECT_EQ(plan.local(), "10.200.1.1/30");
  EXPECT_EQ(plan.peer(), "10.200.1.2");
  ASSERT_EQ(plan.routes_size(), 1);
  EXPECT_EQ(plan.routes(0).destination(), "10.200.0.0/16");
  EXPECT_EQ(plan.routes(0).gateway(), "10.200.1.2");
  EXPECT_EQ(plan.mtu(), 8000u);
  EXPECT_EQ(plan.gateway_mac(), "02:5e:00:ff:00:01");
  EXPECT_TRUE(plan.provisioned());
  EXPECT_EQ(plan.apply_error(), "");
  ASSERT_TRUE(plan.has_applied());
  EXPECT_EQ(plan.applied().local(), "10.200.1.1/30");
  EXPECT_EQ(plan.applied().peer(), "10.200.1.2");
  ASSERT_EQ(plan.applied().routes_size(), 1);
  EXPECT_EQ(plan.applied().routes(0).destination(), "10.200.0.0/16");
  EXPECT_EQ(plan.applied().mtu(), 8000u);
  EXPECT_EQ(plan.applied().gateway_mac(), "02:5e:00:ff:00:01");
}

TEST(PlanConvertTest, RefusedPlanSaysWhy) {
  v1::ListPlansResponse response;
  ToProto(SampleSnapshot(), &response);
  const v1::PortPlan& plan = response.plans(1);
  EXPECT_EQ(plan.state(), v1::PLAN_STATE_REFUSED);
  EXPECT_EQ(plan.reason(), "PeerIsNetworkAddress");
  EXPECT_EQ(plan.message(), "port so1: peer 10.200.2.0/30 is the network address of its subnet");
  EXPECT_EQ(plan.description(), "no-alert 10.200.2.0/30");
  EXPECT_EQ(plan.local(), "");
  EXPECT_EQ(plan.gateway_mac(), "");  // zero MAC: unknown
  EXPECT_FALSE(plan.provisioned());
  EXPECT_FALSE(plan.has_applied());

  EXPECT_EQ(response.plans(2).state(), v1::PLAN_STATE_PENDING);
  EXPECT_EQ(response.plans(2).reason(), "NoLldpNeighbor");
}

TEST(PlanConvertTest, L2ModeAndApplyError) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.mode = addressing::Mode::kL2;
  snapshot.addressing[0].plan.state = addressing::PlanState::kL2;
  snapshot.addressing[0].apply_error = "port so0: set MTU 8000: Invalid argument";
  v1::ListPlansResponse response;
  ToProto(snapshot, &response);
  EXPECT_EQ(response.mode(), "L2");
  EXPECT_EQ(response.plans(0).state(), v1::PLAN_STATE_L2);
  EXPECT_EQ(response.plans(0).apply_error(), "port so0: set MTU 8000: Invalid argument");
}

TEST(PlanConvertTest, DescriptionThatIsNotUtf8) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.addressing[1].plan.description =
      "no-alert \xff"
      "10.200.2.0/30";
  v1::PortPlan plan;
  ToProto(snapshot.addressing[1], &plan);
  EXPECT_EQ(plan.description(),
            "no-alert \xEF\xBF\xBD"
            "10.200.2.0/30");
  v1::PortPlan parsed;
  EXPECT_TRUE(parsed.ParseFromString(plan.SerializeAsString()));
}

TEST(PlanConvertTest, Names) {
  EXPECT_EQ(PlanStateName(addressing::PlanState::kPending), "Pending");
  EXPECT_EQ(PlanStateName(addressing::PlanState::kReady), "Ready");
  EXPECT_EQ(PlanStateName(addressing::PlanState::kRefused), "Refused");
  EXPECT_EQ(PlanStateName(addressing::PlanState::kL2), "L2");
  EXPECT_EQ(ModeName(addressing::Mode::kL3), "L3");
}

TEST(PlanConvertTest, FindByIdOrName) {
  const node::NodeSnapshot snapshot = SampleSnapshot();
  ASSERT_NE(FindAddressing(snapshot, "so1"), nullptr);
  EXPECT_EQ(FindAddressing(snapshot, "so1")->port_id, "0000:19:00.0-p22");
  EXPECT_EQ(FindAddressing(snapshot, "0000:19:00.0-p22"), FindAddressing(snapshot, "so1"));
  EXPECT_EQ(FindAddressing(snapshot, "so9"), nullptr);
}

}  // namespace
}  // namespace rocenet::api
