// SPDX-License-Identifier: Apache-2.0
#include "client/render/structured.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rocenet/v1/health.pb.h"
#include "rocenet/v1/ports.pb.h"
#include "tests/unit/support/status_matchers.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;
using ::testing::Not;

v1::ListPortsResponse TwoPorts() {
  v1::ListPortsResponse response;
  v1::Port* so1 = response.add_ports();
  so1->set_id("0000:33:00.0-p1");
  so1->set_name("so1");
  so1->set_present(true);
  so1->set_mac("b0:fd:0b:00:00:01");
  so1->set_mtu(8000);
  so1->set_speed_mbps(100000);
  so1->set_pci_address("0000:33:00.0");
  so1->set_numa_node(-1);
  so1->set_module_id(3);
  so1->set_discovery(v1::DISCOVERY_GAUDI_SYSFS);
  so1->set_oper_state(v1::OPER_STATE_UP);
  so1->mutable_counters()->set_receive_bytes(123456789012345);
  v1::Port* so2 = response.add_ports();
  so2->set_id("if-so2");
  so2->set_name("so2");
  return response;
}

// Protobuf JSON back from the YAML: quoted scalars are strings, plain ones
// are read as bool or number where they look like one.
nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.Scalar()] = YamlToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;
      if (text == "true" || text == "false") return text == "true";
      const nlohmann::json number =
          nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      return number.is_number() ? number : nlohmann::json(text);
    }
    default:
      return nullptr;
  }
}

TEST(ToJsonTest, SnakeCaseKeysAndEveryField) {
  auto json = ToJson(TwoPorts());
  ASSERT_OK(json);
  EXPECT_THAT(*json, HasSubstr("\"pci_address\": \"0000:33:00.0\""));
  EXPECT_THAT(*json, HasSubstr("\"speed_mbps\""));
  EXPECT_THAT(*json, Not(HasSubstr("pciAddress")));
  // so2 has no counters set; its primitive fields still appear.
  const nlohmann::json parsed = nlohmann::json::parse(*json);
  EXPECT_EQ(parsed["ports"][1]["mtu"], 0);
  EXPECT_EQ(parsed["ports"][1]["present"], false);
  EXPECT_EQ(parsed["ports"][0]["discovery"], "DISCOVERY_GAUDI_SYSFS");
  EXPECT_EQ(json->back(), '\n');
  EXPECT_NE(json->substr(json->size() - 2), "\n\n");
}

TEST(ToJsonTest, RoundTripsToTheSameMessage) {
  auto json = ToJson(TwoPorts());
  ASSERT_OK(json);
  v1::ListPortsResponse back;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(*json, &back));
  EXPECT_TRUE(MessageDifferencer::Equals(back, TwoPorts())) << back.DebugString();
}

TEST(ToJsonTest, EmptyListStillHasTheKey) {
  auto json = ToJson(v1::ListPortsResponse());
  ASSERT_OK(json);
  EXPECT_EQ(nlohmann::json::parse(*json), nlohmann::json::parse(R"({"ports": []})"));
}

TEST(ToYamlTest, BlockStyleWithSnakeCaseKeys) {
  auto yaml = ToYaml(TwoPorts());
  ASSERT_OK(yaml);
  EXPECT_THAT(*yaml, ::testing::StartsWith("ports:\n  - id: \"0000:33:00.0-p1\"\n    name: so1\n"));
  EXPECT_THAT(*yaml, HasSubstr("\n    pci_address: \"0000:33:00.0\"\n"));
  EXPECT_THAT(*yaml, HasSubstr("\n    mtu: 8000\n"));
  // Block style throughout; an empty map (a port without RDMA counters) is
  // the one "{}".
  EXPECT_THAT(*yaml, HasSubstr("\n      rdma: {}\n"));
  EXPECT_THAT(absl::StrReplaceAll(*yaml, {{"{}", ""}}), Not(HasSubstr("{")));
}

TEST(ToYamlTest, ParsesBackToTheSameValues) {
  auto yaml = ToYaml(TwoPorts());
  ASSERT_OK(yaml);
  const YAML::Node node = YAML::Load(*yaml);
  EXPECT_EQ(node["ports"][0]["pci_address"].as<std::string>(), "0000:33:00.0");
  EXPECT_EQ(node["ports"][0]["mac"].as<std::string>(), "b0:fd:0b:00:00:01");
  EXPECT_EQ(node["ports"][0]["mtu"].as<int>(), 8000);
  EXPECT_EQ(node["ports"][0]["numa_node"].as<int>(), -1);
  EXPECT_TRUE(node["ports"][0]["present"].as<bool>());
  EXPECT_FALSE(node["ports"][1]["present"].as<bool>());

  v1::ListPortsResponse back;
  const std::string json = YamlToJson(node).dump();
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(json, &back)) << json;
  EXPECT_TRUE(MessageDifferencer::Equals(back, TwoPorts())) << back.DebugString();
}

TEST(ToYamlTest, EmptyListIsFlowStyle) {
  auto yaml = ToYaml(v1::ListPortsResponse());
  ASSERT_OK(yaml);
  EXPECT_EQ(*yaml, "ports: []\n");
}

TEST(ToYamlTest, TimestampsAndHealthRoundTrip) {
  v1::NodeHealth node;
  node.set_ready(true);
  node.set_ports_total(1);
  node.set_ports_healthy(1);
  v1::PortHealth* port = node.add_ports();
  port->set_name("so1");
  port->set_healthy(true);
  port->mutable_since()->set_seconds(1'700'000'000);
  auto yaml = ToYaml(node);
  ASSERT_OK(yaml);
  EXPECT_THAT(*yaml, HasSubstr("since: \"2023-11-14T22:13:20Z\""));
  v1::NodeHealth back;
  const std::string json = YamlToJson(YAML::Load(*yaml)).dump();
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(json, &back)) << json;
  EXPECT_TRUE(MessageDifferencer::Equals(back, node)) << back.DebugString();
}

TEST(JsonToYamlTest, QuotesStringsYamlWouldReadAsSomethingElse) {
  auto yaml = JsonToYaml(R"({"a": "yes", "b": "123", "c": "", "d": "so1", "e": "Off",
                             "f": "null", "g": 5, "h": true, "i": "a: b"})");
  ASSERT_OK(yaml);
  EXPECT_EQ(*yaml,
            "a: \"yes\"\n"
            "b: \"123\"\n"
            "c: \"\"\n"
            "d: so1\n"
            "e: \"Off\"\n"
            "f: \"null\"\n"
            "g: 5\n"
            "h: true\n"
            "i: \"a: b\"\n");
}

TEST(JsonToYamlTest, BrokenJsonIsAnErrorNotAnException) {
  auto yaml = JsonToYaml("{\"a\": [1, 2");
  EXPECT_EQ(yaml.status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace rocenet::rocectl
