// SPDX-License-Identifier: Apache-2.0
#include "client/render/topology_render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/support/status_matchers.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two Gaudi modules with two ports each (dev_port 8 and 22); dev_port 8 is
// cabled to leaf-a, dev_port 22 to leaf-b, except module 1's port 22 which
// hears nobody.
struct Fixture {
  v1::ListPortsResponse ports;
  v1::ListNeighborsResponse neighbors;
  v1::ListPlansResponse plans;
};

void AddPort(Fixture& f, const std::string& name, int module, int dev_port, bool up) {
  v1::Port* port = f.ports.add_ports();
  const std::string pci = module == 0 ? "0000:19:00.0" : "0000:29:00.0";
  port->set_id(pci + "-p" + std::to_string(dev_port));
  port->set_name(name);
  port->set_present(true);
  port->set_admin_up(true);
  port->set_carrier(up);
  port->set_pci_address(pci);
  port->set_pcie_root(module == 0 ? "pci0000:16" : "pci0000:26");
  port->set_numa_node(module);
  port->set_module_id(module);
  port->set_port_index(dev_port);
  port->set_rail(dev_port == 8 ? 0 : 1);  // rocenetd's order inside the module
}

void AddNeighbor(Fixture& f, const std::string& port_id, const std::string& name,
                 const std::string& switch_name, const std::string& chassis,
                 const std::string& switch_port, const std::string& peer) {
  v1::PortNeighbors* entry = f.neighbors.add_ports();
  entry->set_port_id(port_id);
  entry->set_name(name);
  if (switch_name.empty() && chassis.empty()) return;
  v1::Neighbor* neighbor = entry->add_neighbors();
  neighbor->mutable_chassis_id()->set_subtype("MacAddress");
  neighbor->mutable_chassis_id()->set_value(chassis);
  neighbor->mutable_port_id()->set_subtype("Local");
  neighbor->mutable_port_id()->set_value(switch_port);
  neighbor->add_port_descriptions("no-alert " + peer + "/30");
  if (!switch_name.empty()) neighbor->add_system_names(switch_name);
  v1::LldpManagementAddress* address = neighbor->add_management_addresses();
  address->set_family(1);
  address->set_address(chassis == "02:00:00:00:00:0a" ? "192.0.2.10" : "192.0.2.11");
}

void AddPlan(Fixture& f, const std::string& port_id, const std::string& local,
             const std::string& peer) {
  v1::PortPlan* plan = f.plans.add_plans();
  plan->set_port_id(port_id);
  plan->set_local(local);
  plan->set_peer(peer);
}

Topology SampleTopology() {
  Fixture f;
  AddPort(f, "so0", 0, 8, true);
  AddPort(f, "so1", 0, 22, true);
  AddPort(f, "so2", 1, 8, true);
  AddPort(f, "so3", 1, 22, false);
  AddNeighbor(f, "0000:19:00.0-p8", "so0", "leaf-a", "02:00:00:00:00:0a", "Ethernet1/1",
              "10.200.1.2");
  AddNeighbor(f, "0000:19:00.0-p22", "so1", "leaf-b", "02:00:00:00:00:0b", "Ethernet1/1",
              "10.201.1.2");
  AddNeighbor(f, "0000:29:00.0-p8", "so2", "leaf-a", "02:00:00:00:00:0a", "Ethernet1/2",
              "10.200.2.2");
  AddNeighbor(f, "0000:29:00.0-p22", "so3", "", "", "", "");
  AddPlan(f, "0000:19:00.0-p8", "10.200.1.1/30", "10.200.1.2");
  AddPlan(f, "0000:19:00.0-p22", "10.201.1.1/30", "10.201.1.2");
  AddPlan(f, "0000:29:00.0-p8", "10.200.2.1/30", "10.200.2.2");
  return BuildTopology("node-7", f.ports, f.neighbors, f.plans);
}

TEST(TopologyTest, GroupsSwitchesAndRails) {
  const Topology topology = SampleTopology();
  ASSERT_EQ(topology.switches.size(), 2u);
  EXPECT_EQ(topology.switches[0].system_name, "leaf-a");
  EXPECT_EQ(topology.switches[0].ports, (std::vector<std::string>{"so0", "so2"}));
  EXPECT_EQ(topology.switches[0].management_addresses, (std::vector<std::string>{"192.0.2.10"}));
  EXPECT_EQ(topology.switches[1].system_name, "leaf-b");
  ASSERT_EQ(topology.rails.size(), 2u);
  EXPECT_EQ(topology.rails[0].rail, 0);
  EXPECT_EQ(topology.rails[0].ports, (std::vector<std::string>{"so0", "so2"}));
  EXPECT_EQ(topology.rails[0].switches, (std::vector<std::string>{"leaf-a"}));
  EXPECT_EQ(topology.rails[1].rail, 1);
  EXPECT_EQ(topology.rails[1].ports, (std::vector<std::string>{"so1", "so3"}));
  EXPECT_EQ(topology.rails[1].switches, (std::vector<std::string>{"leaf-b"}));
  EXPECT_EQ(topology.ports[3].state, "down");
  EXPECT_TRUE(topology.ports[3].links.empty());
}

TEST(TopologyTest, RailsFollowTheRailFieldNotTheDevPort) {
  // Gaudi 3: module 0's scale-out ports are dev_port 17 and 20, module 1's
  // 5 and 8; equal dev_ports do not make a rail, equal rails do.
  Fixture f;
  AddPort(f, "so0", 0, 17, true);
  AddPort(f, "so1", 0, 20, true);
  AddPort(f, "so2", 1, 5, true);
  AddPort(f, "so3", 1, 8, true);
  for (int i = 0; i < 4; ++i) f.ports.mutable_ports(i)->set_rail(i % 2);
  const Topology topology = BuildTopology("n", f.ports, f.neighbors, f.plans);
  ASSERT_EQ(topology.rails.size(), 2u);
  EXPECT_EQ(topology.rails[0].ports, (std::vector<std::string>{"so0", "so2"}));
  EXPECT_EQ(topology.rails[1].ports, (std::vector<std::string>{"so1", "so3"}));
}

TEST(TopologyTest, UnknownRailIsARailOfItsOwnAndLast) {
  Fixture f;
  AddPort(f, "eth9", 0, 8, true);
  f.ports.mutable_ports(0)->set_port_index(-1);
  f.ports.mutable_ports(0)->set_module_id(-1);
  f.ports.mutable_ports(0)->set_rail(-1);
  AddPort(f, "so0", 0, 8, true);
  const Topology topology = BuildTopology("n", f.ports, f.neighbors, f.plans);
  ASSERT_EQ(topology.rails.size(), 2u);
  EXPECT_EQ(topology.rails[0].rail, 0);
  EXPECT_EQ(topology.rails[1].rail, -1);
  EXPECT_THAT(RenderTopologyTable(topology), HasSubstr("unknown   eth9    -\n"));
}

TEST(TopologyTest, NicsWithoutAModuleMakeRailsByTheNetworkRocenetdNames) {
  Fixture f;
  AddPort(f, "so0", 0, 8, true);
  f.ports.mutable_ports(0)->set_rail_name("0");
  for (const char* name : {"eth2", "eth1", "eth3", "eth4"}) {
    AddPort(f, name, 0, 8, true);
    v1::Port* port = f.ports.mutable_ports(f.ports.ports_size() - 1);
    port->set_module_id(-1);
    port->set_rail(-1);
    port->set_rail_name(std::string(name) == "eth4"   ? ""
                        : std::string(name) == "eth3" ? "10.201.0.0/16"
                                                      : "10.202.0.0/16");
  }
  const Topology topology = BuildTopology("n", f.ports, f.neighbors, f.plans);
  ASSERT_EQ(topology.rails.size(), 4u);
  EXPECT_EQ(topology.rails[0].ports, (std::vector<std::string>{"so0"}));
  EXPECT_EQ(topology.rails[1].name, "10.201.0.0/16");
  EXPECT_EQ(topology.rails[2].ports, (std::vector<std::string>{"eth2", "eth1"}));
  EXPECT_EQ(topology.rails[3].ports, (std::vector<std::string>{"eth4"}));
  const std::string table = RenderTopologyTable(topology);
  EXPECT_THAT(table, HasSubstr("\n10.202.0.0/16   eth2, eth1   -\n"));
  EXPECT_THAT(table, HasSubstr("\nunknown         eth4         -\n"));
  const nlohmann::json json = nlohmann::json::parse(RenderTopologyJson(topology));
  EXPECT_EQ(json["rails"][1]["name"], "10.201.0.0/16");
  EXPECT_TRUE(json["rails"][1]["rail"].is_null());
  EXPECT_EQ(json["ports"][1]["rail_name"], "10.202.0.0/16");
}

TEST(TopologyTest, Table) {
  const std::string table = RenderTopologyTable(SampleTopology());
  EXPECT_THAT(table, HasSubstr("node: node-7\n"));
  EXPECT_THAT(table, HasSubstr("PORT   ID                 MODULE   DEV PORT   NUMA   PCIE ROOT"));
  EXPECT_THAT(table, HasSubstr("so0    0000:19:00.0-p8    0        8          0      pci0000:16   "
                               "up      10.200.1.1/30   leaf-a   Ethernet1/1   10.200.1.2\n"));
  EXPECT_THAT(table, HasSubstr("so3    0000:29:00.0-p22   1        22         1      pci0000:26   "
                               "down    -               -        -             -\n"));
  EXPECT_THAT(table, HasSubstr("SWITCH   CHASSIS             MGMT ADDRESS   PORTS\n"
                               "leaf-a   02:00:00:00:00:0a   192.0.2.10     so0, so2\n"));
  EXPECT_THAT(table, HasSubstr("RAIL   PORTS      SWITCHES\n"
                               "0      so0, so2   leaf-a\n"
                               "1      so1, so3   leaf-b\n"));
}

TEST(TopologyTest, DotHasTheNodeClusterSwitchesAndLabelledEdges) {
  const std::string dot = RenderTopologyDot(SampleTopology());
  EXPECT_THAT(dot, HasSubstr("digraph rocenet_topology {"));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_node {\n    label=\"node node-7\";"));
  EXPECT_THAT(dot, HasSubstr("port0 [label=\"so0\\n0000:19:00.0-p8\\nmodule 0, dev_port 8, "
                             "NUMA 0\\npci0000:16\\n10.200.1.1/30\"];"));
  EXPECT_THAT(dot, HasSubstr("port3 [label=\"so3\\n0000:29:00.0-p22\\nmodule 1, dev_port 22, "
                             "NUMA 1\\npci0000:26\", style=dashed];"));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_sw0 {\n    label=\"switch leaf-a\\nchassis "
                             "02:00:00:00:00:0a\\nmgmt 192.0.2.10\";"));
  EXPECT_THAT(dot, HasSubstr("sw0_0 [label=\"Ethernet1/1\"];"));
  EXPECT_THAT(dot, HasSubstr("sw0_1 [label=\"Ethernet1/2\"];"));
  EXPECT_THAT(dot, HasSubstr("sw1_0 [label=\"Ethernet1/1\"];"));
  EXPECT_THAT(dot, HasSubstr("port0 -> sw0_0 [label=\"rail 0\\n10.200.1.1/30 -> 10.200.1.2\"];"));
  EXPECT_THAT(dot, HasSubstr("port2 -> sw0_1 ["));
  EXPECT_THAT(dot, HasSubstr("port1 -> sw1_0 ["));
  EXPECT_THAT(dot, Not(HasSubstr("port3 ->")));
  EXPECT_EQ(dot.back(), '\n');
}

TEST(TopologyTest, DotEscapesWhatTheSwitchSent) {
  Fixture f;
  AddPort(f, "so0", 0, 8, true);
  AddNeighbor(f, "0000:19:00.0-p8", "so0", "evil\"name\\\n", "02:00:00:00:00:0a", "Eth\"1",
              "10.200.1.2");
  const std::string dot = RenderTopologyDot(BuildTopology("h", f.ports, f.neighbors, f.plans));
  EXPECT_THAT(dot, HasSubstr("label=\"switch evil\\\"name\\\\ \\nchassis"));
  EXPECT_THAT(dot, HasSubstr("[label=\"Eth\\\"1\"]"));
}

TEST(TopologyTest, JsonAndYaml) {
  const Topology topology = SampleTopology();
  const nlohmann::json json = nlohmann::json::parse(RenderTopologyJson(topology));
  EXPECT_EQ(json["node"]["hostname"], "node-7");
  ASSERT_EQ(json["ports"].size(), 4u);
  EXPECT_EQ(json["ports"][0]["neighbors"][0]["switch"], "leaf-a");
  EXPECT_EQ(json["ports"][0]["neighbors"][0]["switch_port"], "Ethernet1/1");
  EXPECT_EQ(json["ports"][0]["port_index"], 8);
  EXPECT_EQ(json["ports"][1]["rail"], 1);
  EXPECT_EQ(json["ports"][0]["local"], "10.200.1.1/30");
  EXPECT_EQ(json["switches"][1]["chassis_id"], "02:00:00:00:00:0b");
  EXPECT_EQ(json["rails"][1]["ports"], nlohmann::json({"so1", "so3"}));

  const absl::StatusOr<std::string> yaml = RenderTopologyYaml(topology);
  ASSERT_OK(yaml);
  const YAML::Node doc = YAML::Load(*yaml);
  EXPECT_EQ(doc["ports"][2]["pci_address"].as<std::string>(), "0000:29:00.0");
  EXPECT_EQ(doc["switches"][0]["system_name"].as<std::string>(), "leaf-a");
  EXPECT_EQ(doc["rails"][0]["rail"].as<int>(), 0);
}

}  // namespace
}  // namespace rocenet::rocectl
