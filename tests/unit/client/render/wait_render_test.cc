// SPDX-License-Identifier: Apache-2.0
#include "client/render/wait_render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

v1::PortHealth* AddPort(v1::NodeHealth& node, const std::string& name, bool healthy) {
  v1::PortHealth* port = node.add_ports();
  port->set_name(name);
  port->set_port_id("0000:19:00.0-p" + name.substr(2));
  port->set_healthy(healthy);
  node.set_ports_total(node.ports_total() + 1);
  if (healthy) node.set_ports_healthy(node.ports_healthy() + 1);
  return port;
}

void AddCondition(v1::PortHealth* port, const std::string& type, const std::string& reason,
                  const std::string& message) {
  v1::Condition* condition = port->add_conditions();
  condition->set_type(type);
  condition->set_reason(reason);
  condition->set_message(message);
}

TEST(WaitRenderTest, NamesThePortsNotReadyWithTheirFirstCondition) {
  v1::NodeHealth node;
  AddPort(node, "so0", true);
  v1::PortHealth* so1 = AddPort(node, "so1", false);
  AddCondition(so1, "LinkDown", "CarrierLost", "port so1: no carrier");
  AddCondition(so1, "NoLldpNeighbor", "NeverHeard", "port so1: no LLDP");
  v1::PortHealth* so2 = AddPort(node, "so2", false);
  AddCondition(so2, "NoLldpNeighbor", "", "");
  EXPECT_EQ(FormatWaitProgress(node),
            "1/3 ports ready; not ready: so1 (LinkDown/CarrierLost: port so1: no carrier), "
            "so2 (NoLldpNeighbor)");
}

TEST(WaitRenderTest, ReadyNoPortsAndUnhealthyWithoutCondition) {
  v1::NodeHealth node;
  EXPECT_EQ(FormatWaitProgress(node), "no scale-out ports found yet");
  AddPort(node, "so0", true);
  node.set_ready(true);
  EXPECT_EQ(FormatWaitProgress(node), "node ready: 1/1 ports ready");
  node.set_ready(false);
  AddPort(node, "so1", false);
  EXPECT_EQ(FormatWaitProgress(node), "1/2 ports ready; not ready: so1 (unhealthy)");
}

TEST(WaitRenderTest, ManyPortsAreCutShort) {
  v1::NodeHealth node;
  for (int i = 0; i < 7; ++i) {
    AddCondition(AddPort(node, "so" + std::to_string(i), false), "LinkDown", "", "");
  }
  EXPECT_EQ(FormatWaitProgress(node),
            "0/7 ports ready; not ready: so0 (LinkDown), so1 (LinkDown), so2 (LinkDown), "
            "so3 (LinkDown), and 3 more");
}

TEST(WaitRenderTest, FitToWidthCountsCodePoints) {
  EXPECT_EQ(FitToWidth("short", 10), "short");
  EXPECT_EQ(FitToWidth("exactly10!", 10), "exactly10!");
  EXPECT_EQ(FitToWidth("a longer line", 6), "a lon…");
  // "é" is two bytes but one column.
  EXPECT_EQ(FitToWidth("ééééé", 5), "ééééé");
  EXPECT_EQ(FitToWidth("éééééé", 5), "éééé…");
  EXPECT_EQ(FitToWidth("anything", 0), "anything");
}

}  // namespace
}  // namespace rocenet::rocectl
