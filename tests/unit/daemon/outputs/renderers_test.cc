// SPDX-License-Identifier: Apache-2.0
#include "daemon/outputs/renderers.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace rocenet::outputs {
namespace {

PortOutput L3Port(const std::string& name, int index) {
  PortOutput port;
  port.gaudi = true;
  port.name = name;
  port.mac = "b0:fd:0b:f0:28:" + std::to_string(10 + index);
  port.l3 = true;
  port.provisioned = true;
  port.local_ip = "10.200." + std::to_string(index) + ".1";
  port.prefix_length = 30;
  port.gateway_ip = "10.200." + std::to_string(index) + ".2";
  port.gateway_mac = "0c:42:a1:00:00:" + std::to_string(10 + index);
  port.mtu = 8000;
  port.routes = {{"10.200.0.0/16", port.gateway_ip}};
  port.healthy = true;
  return port;
}

TEST(SubnetMaskTest, CommonLengthsAndClamping) {
  EXPECT_EQ(SubnetMask(30), "255.255.255.252");
  EXPECT_EQ(SubnetMask(31), "255.255.255.254");
  EXPECT_EQ(SubnetMask(16), "255.255.0.0");
  EXPECT_EQ(SubnetMask(32), "255.255.255.255");
  EXPECT_EQ(SubnetMask(0), "0.0.0.0");
  EXPECT_EQ(SubnetMask(-1), "0.0.0.0");
  EXPECT_EQ(SubnetMask(33), "255.255.255.255");
}

TEST(RenderGaudinetTest, L3PortsSortedByNameInHabanaKeyOrder) {
  PortOutput l2 = L3Port("so9", 9);
  l2.l3 = false;
  PortOutput slash31 = L3Port("so0", 0);
  slash31.prefix_length = 31;
  const std::vector<PortOutput> ports = {L3Port("so2", 2), l2, slash31, L3Port("so10", 1)};

  EXPECT_EQ(RenderGaudinet(PlanGaudinet(ports)),
            R"({
    "NIC_NET_CONFIG": [
        {
            "NIC_MAC": "b0:fd:0b:f0:28:10",
            "NIC_IP": "10.200.0.1",
            "SUBNET_MASK": "255.255.255.254",
            "GATEWAY_MAC": "0c:42:a1:00:00:10"
        },
        {
            "NIC_MAC": "b0:fd:0b:f0:28:11",
            "NIC_IP": "10.200.1.1",
            "SUBNET_MASK": "255.255.255.252",
            "GATEWAY_MAC": "0c:42:a1:00:00:11"
        },
        {
            "NIC_MAC": "b0:fd:0b:f0:28:12",
            "NIC_IP": "10.200.2.1",
            "SUBNET_MASK": "255.255.255.252",
            "GATEWAY_MAC": "0c:42:a1:00:00:12"
        }
    ]
}
)");
}

TEST(RenderGaudinetTest, NoL3PortsIsAnEmptyList) {
  EXPECT_EQ(RenderGaudinet(PlanGaudinet({})), "{\n    \"NIC_NET_CONFIG\": []\n}\n");
}

TEST(RenderGaudinetTest, ParsesAsHclDoesAndEscapesOddStrings) {
  PortOutput port = L3Port("so0", 0);
  port.gateway_mac = "tab\tmac";
  port.mac = "quote\"back\\slash";
  const nlohmann::json parsed = nlohmann::json::parse(RenderGaudinet(PlanGaudinet({port})));
  const nlohmann::json& entry = parsed.at("NIC_NET_CONFIG").at(0);
  EXPECT_EQ(entry.at("NIC_MAC"), "quote\"back\\slash");
  EXPECT_EQ(entry.at("GATEWAY_MAC"), "tab\tmac");
  EXPECT_EQ(entry.size(), 4u);
}

TEST(RenderGaudinetTest, InvalidUtf8DoesNotThrow) {
  PortOutput port = L3Port("so0", 0);
  port.mac = "\xff\xfe";
  EXPECT_NO_THROW(EXPECT_TRUE(
      nlohmann::json::parse(RenderGaudinet(PlanGaudinet({port}))).contains("NIC_NET_CONFIG")));
}

// What HCL accepts (docs/rocenetd.md): a port without an address is left
// out; harmless while it is down, fatal once it is up, so an up one holds
// the file back; a down port that kept its address keeps its entry.
TEST(PlanGaudinetTest, PortsWithoutAnAddressAreLeftOutAndAnUpOneHoldsTheFile) {
  PortOutput down_unaddressed = L3Port("so1", 1);
  down_unaddressed.provisioned = false;
  down_unaddressed.local_ip.clear();
  PortOutput down_kept = L3Port("so2", 2);
  PortOutput no_switch_mac = L3Port("so3", 3);
  no_switch_mac.gateway_mac.clear();
  PortOutput l2 = L3Port("so4", 4);
  l2.l3 = false;
  GaudinetPlan plan =
      PlanGaudinet({down_kept, L3Port("so0", 0), down_unaddressed, no_switch_mac, l2});
  ASSERT_EQ(plan.entries.size(), 2u);
  EXPECT_EQ(plan.entries[0].name, "so0");
  EXPECT_EQ(plan.entries[1].name, "so2");
  EXPECT_EQ(plan.missing, (std::vector<std::string>{"so1", "so3"}));
  EXPECT_TRUE(plan.writable);
  EXPECT_EQ(plan.held_by, "");

  no_switch_mac.up = true;
  plan = PlanGaudinet({L3Port("so0", 0), down_unaddressed, no_switch_mac});
  EXPECT_FALSE(plan.writable);
  EXPECT_EQ(plan.held_by, "so3");

  // Nothing to list: no file.
  EXPECT_FALSE(PlanGaudinet({down_unaddressed}).writable);
  EXPECT_FALSE(PlanGaudinet({l2}).writable);
}

TEST(NetworkdFileNameTest, NameAndPattern) {
  EXPECT_EQ(NetworkdFileName("so0"), "50-rocenet-so0.network");
  EXPECT_TRUE(IsNetworkdFileName("50-rocenet-so0.network"));
  EXPECT_TRUE(IsNetworkdFileName("10-rocenet-ens1f0np0.network"));
  EXPECT_FALSE(IsNetworkdFileName("50-rocenet-.network"));
  EXPECT_FALSE(IsNetworkdFileName("-rocenet-so0.network"));
  EXPECT_FALSE(IsNetworkdFileName("admin-rocenet-so0.network"));
  EXPECT_FALSE(IsNetworkdFileName("50-rocenet-so0.network.bak"));
  EXPECT_FALSE(IsNetworkdFileName(".50-rocenet-so0.network.tmpAbC123"));
  EXPECT_FALSE(IsNetworkdFileName("50-so0.network"));
  EXPECT_FALSE(IsNetworkdFileName("99-default.network"));
}

TEST(RenderNetworkdFileTest, L3Port) {
  PortOutput port = L3Port("so1", 1);
  port.routes.push_back({"10.201.0.0/16", "10.200.1.2"});
  EXPECT_EQ(RenderNetworkdFile(port),
            "# Generated by rocenet for so1 from what the switch announces over LLDP.\n"
            "# Edits are overwritten; the file is removed when the port is no longer "
            "provisioned.\n"
            "[Match]\n"
            "Name=so1\n"
            "\n"
            "[Link]\n"
            "MTUBytes=8000\n"
            "RequiredForOnline=no\n"
            "\n"
            "[Network]\n"
            "Address=10.200.1.1/30\n"
            "LinkLocalAddressing=no\n"
            "IPv6AcceptRA=no\n"
            "LLDP=no\n"
            "\n"
            "[Route]\n"
            "Destination=10.200.0.0/16\n"
            "Gateway=10.200.1.2\n"
            "\n"
            "[Route]\n"
            "Destination=10.201.0.0/16\n"
            "Gateway=10.200.1.2\n");
}

TEST(RenderNetworkdFileTest, L2PortWithoutMtuHasNoAddressNorRoutes) {
  PortOutput port = L3Port("so3", 3);
  port.l3 = false;
  port.mtu = 0;
  EXPECT_EQ(RenderNetworkdFile(port),
            "# Generated by rocenet for so3 from what the switch announces over LLDP.\n"
            "# Edits are overwritten; the file is removed when the port is no longer "
            "provisioned.\n"
            "[Match]\n"
            "Name=so3\n"
            "\n"
            "[Link]\n"
            "RequiredForOnline=no\n"
            "\n"
            "[Network]\n"
            "LinkLocalAddressing=no\n"
            "IPv6AcceptRA=no\n"
            "LLDP=no\n");
}

TEST(RenderNetworkdFileTest, RouteWithoutGatewayIsOnLink) {
  PortOutput port = L3Port("so0", 0);
  port.routes = {{"10.250.0.0/24", ""}};
  const std::string file = RenderNetworkdFile(port);
  EXPECT_NE(file.find("[Route]\nDestination=10.250.0.0/24\n"), std::string::npos);
  EXPECT_EQ(file.find("Gateway="), std::string::npos);
}

TEST(NfdPortsLabelTest, SameNamespaceAsTheReadyLabel) {
  EXPECT_EQ(NfdPortsLabel("rocenet.io/scale-out-ready"), "rocenet.io/scale-out-ports");
  EXPECT_EQ(NfdPortsLabel("example.com/roce-ready"), "example.com/scale-out-ports");
  EXPECT_EQ(NfdPortsLabel("roce-ready"), "scale-out-ports");
}

TEST(RenderNfdFeaturesTest, AllReady) {
  EXPECT_EQ(RenderNfdFeatures("rocenet.io/scale-out-ready", {L3Port("so0", 0), L3Port("so1", 1)}),
            "# Generated by rocenet. Present only while every scale-out port is ready.\n"
            "rocenet.io/scale-out-ready=true\n"
            "rocenet.io/scale-out-ports=2\n");
}

TEST(RenderNfdFeaturesTest, CountsOnlyHealthyProvisionedPorts) {
  PortOutput sick = L3Port("so1", 1);
  sick.healthy = false;
  PortOutput pending = L3Port("so2", 2);
  pending.provisioned = false;
  EXPECT_EQ(RenderNfdFeatures("rocenet.io/scale-out-ready", {L3Port("so0", 0), sick, pending}),
            "# Generated by rocenet. Present only while every scale-out port is ready.\n"
            "rocenet.io/scale-out-ready=false\n"
            "rocenet.io/scale-out-ports=1\n");
  EXPECT_EQ(RenderNfdFeatures("rocenet.io/scale-out-ready", {}),
            "# Generated by rocenet. Present only while every scale-out port is ready.\n"
            "rocenet.io/scale-out-ready=false\n"
            "rocenet.io/scale-out-ports=0\n");
}

TEST(RenderNfdFeaturesTest, CommentIsNotAnNfdDirective) {
  // nfd-worker treats "# +..." as a directive and logs unknown ones as errors.
  const std::string file = RenderNfdFeatures("rocenet.io/scale-out-ready", {L3Port("so0", 0)});
  EXPECT_EQ(file.rfind("# +", 0), std::string::npos);
}

TEST(RenderNetworkManagerDropInTest, OneDeviceSectionUnmanagingEveryPortLiterally) {
  EXPECT_EQ(RenderNetworkManagerDropIn({"so0", "so1", "ens1f0np0"}),
            "# Generated by rocenet: NetworkManager leaves rocenet's scale-out ports alone.\n"
            "# Rewritten when the ports change; edits are overwritten.\n"
            "[device-rocenet]\n"
            "match-device=interface-name:=so0;interface-name:=so1;interface-name:=ens1f0np0\n"
            "managed=0\n");
}

TEST(CheckNetworkManagerNameTest, AcceptsNamesDriversGive) {
  for (const char* name :
       {"so0", "ens1f0np0", "eth0.100", "hbl_en-3", "a@b+c", "abcdefghijklmno"}) {
    EXPECT_TRUE(CheckNetworkManagerName(name).ok()) << name;
  }
}

TEST(CheckNetworkManagerNameTest, RefusesWhatTheDeviceListWouldReadOtherwise) {
  // Separators, the escape, globs, whitespace (trimmed), a comment sign, and
  // what the kernel itself refuses: empty, too long, a path.
  for (const char* name : {"so,1", "so;1", "so\\1", "so*", "so?", " so0", "so\t0", "#so0", "",
                           "abcdefghijklmnop", "so/0", "so=0", "so~0"}) {
    const absl::Status status = CheckNetworkManagerName(name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
  }
}

TEST(CheckNetworkManagerNameTest, ErrorNamesThePortEscaped) {
  const absl::Status status = CheckNetworkManagerName("so,\n1");
  EXPECT_NE(status.message().find("port \"so,\\n1\""), absl::string_view::npos) << status.message();
}

}  // namespace
}  // namespace rocenet::outputs
