// SPDX-License-Identifier: Apache-2.0
// Scrapes rocenetd's metrics collectable (NodeMetrics over a fake node state,
// as the exposer does), parses the text exposition strictly and holds every
// family to the Prometheus and node_exporter naming conventions of
// docs/metrics.md (the parser: exposition_parser.h; the rules:
// metric_conventions.h). Also checks the health, diagnostics and attachment
// families' values.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/api/metrics.h"
#include "daemon/api/metrics_config.h"
#include "daemon/diagd/metrics_diag.h"
#include "daemon/lldp/decode_error.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "tests/unit/daemon/api/exposition_parser.h"
#include "tests/unit/daemon/api/fake_node_state.h"
#include "tests/unit/daemon/api/metric_conventions.h"

namespace rocenet::api {
namespace {

using ::rocenet::api::testing::CheckFamily;
using ::rocenet::api::testing::FakeNodeState;
using ::rocenet::api::testing::kNow;
using ::rocenet::api::testing::Labels;
using ::rocenet::api::testing::ParsedFamily;
using ::rocenet::api::testing::ParseExposition;
using ::rocenet::api::testing::Sample;
using ::rocenet::api::testing::SampleSnapshot;

// ---- The snapshot scraped ---------------------------------------------------

node::NodeSnapshot ScrapedSnapshot() {
  node::NodeSnapshot snapshot = SampleSnapshot();
  for (const inventory::Port& port : snapshot.ports) {
    health::PortHealth health;
    health.port_id = port.id;
    health.name = port.name;
    health.healthy = true;
    health.since = kNow - absl::Hours(1);
    snapshot.health.ports.push_back(std::move(health));
  }
  snapshot.health.ports[1].healthy = false;
  snapshot.health.ports[1].conditions = {
      {"LldpExpired", "AgedOut", "port so1: the switch's LLDP information expired",
       kNow - absl::Seconds(30)},
      {"ErrorsRising", "ReceiveErrors", "port so1: receive errors rose in 2 sampling intervals",
       kNow - absl::Seconds(90)}};
  snapshot.health.ports[2].healthy = false;
  snapshot.health.ports[2].conditions = {{"NoLldpNeighbor", "NoFrames",
                                          "port so2: no LLDP frame received from the switch yet",
                                          kNow - absl::Minutes(2)}};
  snapshot.health.ports_total = 3;
  snapshot.health.ports_healthy = 1;
  snapshot.ports[2].attached_to = "/var/run/netns/cni-1234";
  snapshot.attach.Record(node::AttachOperation::kAttach, true, absl::Milliseconds(40));
  snapshot.attach.Record(node::AttachOperation::kAttach, true, absl::Milliseconds(300));
  snapshot.attach.Record(node::AttachOperation::kAttach, false, absl::Seconds(7));
  snapshot.attach.Record(node::AttachOperation::kCheck, true, absl::Milliseconds(2));
  snapshot.attach.Record(node::AttachOperation::kDetach, true, absl::Milliseconds(30));
  snapshot.reserved_ports = 2;
  return snapshot;
}

// The diagnostics after one run of each test.
void RecordDiagnostics(diagd::DiagMetrics& diag) {
  v1::ReachResult reach;
  reach.set_ok(true);
  v1::PortReach* port = reach.add_ports();
  port->set_node("node-a");
  port->set_port("so0");
  v1::ReachTarget* target = port->add_targets();
  target->set_address("10.200.1.2");
  target->set_kind("gateway");
  target->set_loss_ratio(0);
  target->set_rtt_p50_seconds(0.0001);
  target->set_reachable(true);
  // Two peers of a mesh: one series for both, the worst of them.
  for (const auto& [address, loss, p50] :
       {std::tuple<const char*, double, double>{"10.200.2.1", 0.0, 0.0002},
        {"10.200.3.1", 0.25, 0.0009}}) {
    v1::ReachTarget* peer = port->add_targets();
    peer->set_address(address);
    peer->set_kind("peer");
    peer->set_loss_ratio(loss);
    peer->set_rtt_p50_seconds(p50);
    peer->set_reachable(loss == 0);
  }
  diag.Record(reach);
  v1::BandwidthResult bandwidth;
  bandwidth.set_port("so0");
  bandwidth.set_peer("10.200.2.1");
  bandwidth.add_directions()->set_direction("transmit");
  bandwidth.mutable_directions(0)->set_bits_per_second(8e9);
  diag.Record(bandwidth);
  v1::AllreduceResult allreduce;
  v1::RailResult* rail = allreduce.add_rails();
  rail->set_rail("10.201.0.0/16");
  rail->add_sizes()->set_busbw_bytes_per_second(1e9);
  diag.Record(allreduce);
  v1::IncastResult incast;
  incast.set_port("so0");
  incast.set_fairness(0.9);
  incast.add_senders()->set_node("node-b");
  incast.mutable_senders(0)->set_bits_per_second(4e9);
  diag.Record(incast);
}

// Every collectable rocenetd's exposer serves, as daemon.cc registers them.
class MetricsConventionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeNodeState state(ScrapedSnapshot());
    NodeMetrics metrics(&state, "1.2.3");
    diagd::DiagMetrics diag;
    RecordDiagnostics(diag);
    ConfigReloadMetrics reloads(kNow);
    reloads.Record(false, kNow + absl::Seconds(5));
    std::vector<prometheus::MetricFamily> families = metrics.Collect();
    for (const prometheus::Collectable* c : {static_cast<prometheus::Collectable*>(&diag),
                                             static_cast<prometheus::Collectable*>(&reloads)}) {
      for (prometheus::MetricFamily& family : c->Collect()) families.push_back(std::move(family));
    }
    text_ = prometheus::TextSerializer().Serialize(families);
    families_ = ParseExposition(text_);
  }

  std::map<Labels, double> Values(const std::string& family, const std::string& sample = "") {
    std::map<Labels, double> out;
    for (const Sample& s : families_[family].samples) {
      if (s.name == (sample.empty() ? family : sample)) out[s.labels] = s.value;
    }
    return out;
  }

  std::string text_;
  std::map<std::string, ParsedFamily> families_;
};

TEST_F(MetricsConventionsTest, EveryFamilyFollowsTheConventions) {
  ASSERT_GT(families_.size(), 45u) << text_;
  for (const auto& [name, family] : families_) CheckFamily(name, family);
}

TEST_F(MetricsConventionsTest, TheFullSetOfDesign39) {
  for (const char* name : {
           "rocenet_build_info",
           "rocenet_node_ready",
           "rocenet_node_managed_ports",
           "rocenet_node_uninstalled",
           "rocenet_port_info",
           "rocenet_port_present",
           "rocenet_port_healthy",
           "rocenet_port_attached",
           "rocenet_port_up",
           "rocenet_port_carrier",
           "rocenet_port_mtu_bytes",
           "rocenet_port_speed_bytes",
           "rocenet_port_receive_bytes_total",
           "rocenet_port_receive_packets_total",
           "rocenet_port_receive_errors_total",
           "rocenet_port_receive_drops_total",
           "rocenet_port_transmit_bytes_total",
           "rocenet_port_transmit_packets_total",
           "rocenet_port_transmit_errors_total",
           "rocenet_port_transmit_drops_total",
           "rocenet_port_condition",
           "rocenet_port_condition_since_timestamp_seconds",
           "rocenet_lldp_frames_received_total",
           "rocenet_lldp_frames_discarded_total",
           "rocenet_lldp_tlvs_discarded_total",
           "rocenet_lldp_tlvs_unrecognized_total",
           "rocenet_lldp_socket_errors_total",
           "rocenet_lldp_ageouts_total",
           "rocenet_lldp_neighbors",
           "rocenet_lldp_neighbor_info",
           "rocenet_port_provisioned",
           "rocenet_port_addressing_failed",
           "rocenet_port_link_set_up_total",
           "rocenet_addressing_plan_info",
           "rocenet_attach_operations_total",
           "rocenet_attach_duration_seconds",
           "rocenet_reserved_ports",
       }) {
    EXPECT_EQ(families_.count(name), 1u) << name;
  }
}

TEST_F(MetricsConventionsTest, ConditionsAreOneSeriesPerPortAndType) {
  const std::map<Labels, double> conditions = Values("rocenet_port_condition");
  EXPECT_EQ(conditions.size(), 3 * std::size(health::kConditionTypes));
  double held = 0;
  for (const auto& [labels, value] : conditions) held += value;
  EXPECT_EQ(held, 3);
  EXPECT_EQ(conditions.at({{"device", "so1"}, {"condition", "ErrorsRising"}}), 1);
  EXPECT_EQ(conditions.at({{"device", "so1"}, {"condition", "LldpExpired"}}), 1);
  EXPECT_EQ(conditions.at({{"device", "so1"}, {"condition", "LinkDown"}}), 0);
  EXPECT_EQ(conditions.at({{"device", "so2"}, {"condition", "NoLldpNeighbor"}}), 1);
  EXPECT_EQ(conditions.at({{"device", "so0"}, {"condition", "NoLldpNeighbor"}}), 0);

  const std::map<Labels, double> since = Values("rocenet_port_condition_since_timestamp_seconds");
  const double now = absl::ToDoubleSeconds(kNow - absl::UnixEpoch());
  EXPECT_EQ(since, (std::map<Labels, double>{
                       {{{"device", "so1"}, {"condition", "LldpExpired"}}, now - 30},
                       {{{"device", "so1"}, {"condition", "ErrorsRising"}}, now - 90},
                       {{{"device", "so2"}, {"condition", "NoLldpNeighbor"}}, now - 120}}));

  EXPECT_EQ(Values("rocenet_port_healthy"),
            (std::map<Labels, double>{
                {{{"device", "so0"}}, 1}, {{{"device", "so1"}}, 0}, {{{"device", "so2"}}, 0}}));
  EXPECT_EQ(Values("rocenet_port_attached"),
            (std::map<Labels, double>{
                {{{"device", "so0"}}, 0}, {{{"device", "so1"}}, 0}, {{{"device", "so2"}}, 1}}));
  EXPECT_EQ(Values("rocenet_node_ready"), (std::map<Labels, double>{{{}, 0}}));
}

TEST_F(MetricsConventionsTest, ReachIsOneSeriesPerPortAndKindOfTarget) {
  EXPECT_EQ(Values("rocenet_diag_reach_loss_ratio"),
            (std::map<Labels, double>{
                {{{"device", "so0"}, {"kind", "gateway"}, {"node", "node-a"}}, 0},
                {{{"device", "so0"}, {"kind", "peer"}, {"node", "node-a"}}, 0.25}}));
  EXPECT_EQ(
      Values("rocenet_diag_reach_unreachable_targets"),
      (std::map<Labels, double>{{{{"device", "so0"}, {"kind", "gateway"}, {"node", "node-a"}}, 0},
                                {{{"device", "so0"}, {"kind", "peer"}, {"node", "node-a"}}, 1}}));
  const std::map<Labels, double> rtt = Values("rocenet_diag_reach_rtt_seconds");
  EXPECT_EQ(rtt.size(), 6u);  // 2 kinds x 3 percentiles
  EXPECT_DOUBLE_EQ(
      rtt.at({{"device", "so0"}, {"kind", "peer"}, {"node", "node-a"}, {"percentile", "p50"}}),
      0.0009);
}

TEST_F(MetricsConventionsTest, AttachOperationsAndLatency) {
  const std::map<Labels, double> operations = Values("rocenet_attach_operations_total");
  EXPECT_EQ(operations.size(), 8u);  // every operation and result, from the start
  EXPECT_EQ(operations.at({{"operation", "attach"}, {"result", "success"}}), 2);
  EXPECT_EQ(operations.at({{"operation", "attach"}, {"result", "failure"}}), 1);
  EXPECT_EQ(operations.at({{"operation", "check"}, {"result", "success"}}), 1);
  EXPECT_EQ(operations.at({{"operation", "detach"}, {"result", "success"}}), 1);
  EXPECT_EQ(operations.at({{"operation", "gc"}, {"result", "success"}}), 0);

  const std::string name = "rocenet_attach_duration_seconds";
  EXPECT_EQ(Values(name, name + "_count").at({{"operation", "attach"}}), 3);
  EXPECT_NEAR(Values(name, name + "_sum").at({{"operation", "attach"}}), 7.34, 1e-9);
  const std::map<Labels, double> buckets = Values(name, name + "_bucket");
  auto bucket = [&](const char* op, const char* le) {
    return buckets.at({{"operation", op}, {"le", le}});
  };
  EXPECT_EQ(bucket("attach", "0.005"), 0);
  EXPECT_EQ(bucket("attach", "0.05"), 1);
  EXPECT_EQ(bucket("attach", "0.5"), 2);
  EXPECT_EQ(bucket("attach", "5"), 2);
  EXPECT_EQ(bucket("attach", "+Inf"), 3);
  EXPECT_EQ(bucket("check", "0.005"), 1);
  EXPECT_EQ(bucket("gc", "+Inf"), 0);
}

TEST_F(MetricsConventionsTest, ReservedPorts) {
  EXPECT_EQ(Values("rocenet_reserved_ports"), (std::map<Labels, double>{{{}, 2}}));
}

// The checker itself: each rule catches what it is there for.
TEST(MetricsConventionsCheckerTest, RejectsBrokenFamilies) {
  auto failures = [](const std::string& name, ParsedFamily family) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      CheckFamily(name, family);
    }
    return results.size();
  };
  const ParsedFamily good{"Bytes received.", "counter", {{"x", {{"device", "so0"}}, 1}}};
  EXPECT_EQ(failures("rocenet_port_receive_bytes_total", good), 0);
  EXPECT_GT(failures("rocenet_port_receive_bytes", good), 0);  // counter without _total
  ParsedFamily gauge = good;
  gauge.type = "gauge";
  EXPECT_GT(failures("rocenet_port_receive_bytes_total", gauge), 0);  // _total on a gauge
  EXPECT_GT(failures("rocenet_port_receive_milliseconds_total", good), 0);
  EXPECT_GT(failures("rocenet_port_bytes_received_total", good), 0);  // unit not the suffix
  EXPECT_GT(failures("rocenet_portRx_total", good), 0);
  ParsedFamily no_help = good;
  no_help.help = "";
  EXPECT_GT(failures("rocenet_port_receive_bytes_total", no_help), 0);
  ParsedFamily no_device = good;
  no_device.samples[0].labels = {{"interface", "so0"}};
  EXPECT_GT(failures("rocenet_port_receive_bytes_total", no_device), 0);
  ParsedFamily text = gauge;
  text.samples[0].labels["message"] = "port so0: no carrier";
  EXPECT_GT(failures("rocenet_port_condition", text), 0);  // free text outside _info
  text.samples[0].value = 1;
  EXPECT_EQ(failures("rocenet_port_condition_info", text), 0);
  ParsedFamily prose = gauge;
  prose.samples[0].labels["reason"] = "No carrier on the cable";
  EXPECT_GT(failures("rocenet_port_carrier", prose), 0);
}

TEST(MetricsConventionsParserTest, RejectsMalformedExpositions) {
  auto failures = [](const std::string& text) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      ParseExposition(text);
    }
    return results.size();
  };
  EXPECT_EQ(failures("# HELP a_total A.\n# TYPE a_total counter\na_total{device=\"so0\"} 1\n"), 0);
  EXPECT_GT(failures("a_total 1\n"), 0);  // no TYPE
  EXPECT_GT(failures("# HELP a A.\n# TYPE a gauge\na{device=\"so0} 1\n"), 0);
  EXPECT_GT(failures("# HELP a A.\n# TYPE a gauge\na{device=\"so0\"} one\n"), 0);
  EXPECT_GT(failures("# HELP a A.\n# TYPE a gauge\n# HELP b B.\n# TYPE b gauge\na 1\n"), 0);
  EXPECT_GT(failures("# HELP a A.\n# TYPE a summary\n"), 0);
}

}  // namespace
}  // namespace rocenet::api
