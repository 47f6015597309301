// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/metrics.h"

#include <map>
#include <string>

#include "daemon/api/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/check_names.h"
#include "prometheus/text_serializer.h"
#include "tests/unit/daemon/api/fake_node_state.h"

namespace rocenet::api {
namespace {

using ::prometheus::ClientMetric;
using ::prometheus::MetricFamily;
using ::prometheus::MetricType;
using ::rocenet::api::testing::HostileNeighbor;
using ::rocenet::api::testing::SampleSnapshot;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Labels = std::map<std::string, std::string>;

const MetricFamily* FindFamily(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const MetricFamily& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

Labels LabelsOf(const ClientMetric& metric) {
  Labels labels;
  for (const ClientMetric::Label& label : metric.label) labels[label.name] = label.value;
  return labels;
}

double Value(const MetricFamily& family, const ClientMetric& metric) {
  return family.type == MetricType::Counter ? metric.counter.value : metric.gauge.value;
}

// Every sample of the family, by its labels.
std::map<Labels, double> Samples(const std::vector<MetricFamily>& families,
                                 const std::string& name) {
  const MetricFamily* family = FindFamily(families, name);
  EXPECT_NE(family, nullptr) << name;
  std::map<Labels, double> samples;
  if (family == nullptr) return samples;
  for (const ClientMetric& metric : family->metric)
    samples[LabelsOf(metric)] = Value(*family, metric);
  return samples;
}

std::map<Labels, double> ByDevice(std::map<std::string, double> values) {
  std::map<Labels, double> out;
  for (const auto& [device, value] : values) out[{{"device", device}}] = value;
  return out;
}

class MetricsTest : public ::testing::Test {
 protected:
  std::vector<MetricFamily> families_ = BuildMetrics(SampleSnapshot(), "1.2.3");
};

TEST_F(MetricsTest, MacCountersForPortsWhoseDriverHasThem) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  ASSERT_FALSE(snapshot.ports.empty());
  inventory::MacCounters mac;
  mac.receive_bytes = 1 << 20;
  mac.receive_errors = 7;
  snapshot.ports[0].mac = mac;
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  const std::string device = snapshot.ports[0].name;
  EXPECT_EQ(Samples(families, "rocenet_port_mac_receive_bytes_total"),
            ByDevice({{device, 1 << 20}}));
  EXPECT_EQ(Samples(families, "rocenet_port_mac_receive_errors_total"), ByDevice({{device, 7}}));
  // The driver has no such counter: no series, not a made-up 0.
  EXPECT_THAT(Samples(families, "rocenet_port_mac_transmit_errors_total"), IsEmpty());
}

TEST_F(MetricsTest, RdmaStateCountersAndTransportEvents) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  ASSERT_GE(snapshot.ports.size(), 2u);
  inventory::Port& port = snapshot.ports[0];
  port.rdma.emplace();
  port.rdma->device = "rxe0";
  port.rdma->port = 1;
  port.rdma->state = 4;
  port.rdma->state_name = "ACTIVE";
  port.rdma->physical_state = 5;
  port.rdma->physical_state_name = "LinkUp";
  port.rdma_counters = {{"out_of_seq_request", 31}, {"sent_pkts", 4000}};
  port.events.transport = {{"out_of_sequence", 31}};
  // A device whose state is unknown (it left with its port): no state.
  snapshot.ports[1].rdma.emplace();
  snapshot.ports[1].rdma->device = "rxe1";
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  const Labels rxe0 = {{"device", port.name}, {"rdma_port", "rxe0/1"}};
  EXPECT_EQ(Samples(families, "rocenet_port_rdma_state"), (std::map<Labels, double>{{rxe0, 4}}));
  EXPECT_EQ(Samples(families, "rocenet_port_rdma_physical_state"),
            (std::map<Labels, double>{{rxe0, 5}}));
  EXPECT_EQ(
      Samples(families, "rocenet_port_rdma_hw_counter_total"),
      (std::map<Labels, double>{{{{"device", port.name}, {"counter", "out_of_seq_request"}}, 31},
                                {{{"device", port.name}, {"counter", "sent_pkts"}}, 4000}}));
  EXPECT_EQ(
      Samples(families, "rocenet_port_roce_transport_events_total"),
      (std::map<Labels, double>{{{{"device", port.name}, {"event", "out_of_sequence"}}, 31}}));
  // Without RDMA: the families, and no series.
  EXPECT_THAT(Samples(families, "rocenet_port_fec_events_total"), IsEmpty());
  EXPECT_THAT(Samples(families_, "rocenet_port_rdma_state"), IsEmpty());
  EXPECT_THAT(Samples(families_, "rocenet_port_roce_transport_events_total"), IsEmpty());
}

TEST_F(MetricsTest, EachEventFamilyHasTheEventsTheDriverCounts) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  inventory::Port& port = snapshot.ports[0];
  port.events.fec = {{"corrected_blocks", 1200}, {"uncorrectable_blocks", 0}};
  port.events.phy = {{"link_toggles", 3}};
  port.events.lossless = {{"discards", 2}};
  port.events.congestion = {{"cnp_sent", 10}};
  port.link_down_reason = "NO_CABLE";
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  EXPECT_EQ(Samples(families, "rocenet_port_link_down_reason"),
            (std::map<Labels, double>{
                {{{"device", port.name}, {"reason", "NO_CABLE"}, {"detail", ""}}, 1}}));
  EXPECT_THAT(Samples(families_, "rocenet_port_link_down_reason"), IsEmpty());
  snapshot.ports[0].module.emplace();
  snapshot.ports[0].module->temperature.values = {41.5};
  snapshot.ports[0].module->rx_power.values = {0.85, 0.02};
  const std::vector<MetricFamily> modules = BuildMetrics(snapshot, "1.2.3");
  EXPECT_EQ(Samples(modules, "rocenet_port_module_temperature_celsius"),
            ByDevice({{port.name, 41.5}}));
  EXPECT_EQ(Samples(modules, "rocenet_port_module_rx_power_watts"),
            (std::map<Labels, double>{{{{"device", port.name}, {"lane", "1"}}, 0.85e-3},
                                      {{{"device", port.name}, {"lane", "2"}}, 0.02e-3}}));
  EXPECT_THAT(Samples(modules, "rocenet_port_module_tx_bias_amperes"), IsEmpty());
  auto by_event = [&](std::map<std::string, double> values) {
    std::map<Labels, double> out;
    for (const auto& [event, value] : values)
      out[{{"device", port.name}, {"event", event}}] = value;
    return out;
  };
  EXPECT_EQ(Samples(families, "rocenet_port_fec_events_total"),
            by_event({{"corrected_blocks", 1200}, {"uncorrectable_blocks", 0}}));
  EXPECT_EQ(Samples(families, "rocenet_port_phy_events_total"), by_event({{"link_toggles", 3}}));
  EXPECT_EQ(Samples(families, "rocenet_port_lossless_events_total"), by_event({{"discards", 2}}));
  EXPECT_EQ(Samples(families, "rocenet_port_roce_congestion_events_total"),
            by_event({{"cnp_sent", 10}}));
}

TEST_F(MetricsTest, CountersAndOnlyCountersEndInTotal) {
  for (const MetricFamily& family : families_) {
    EXPECT_TRUE(prometheus::CheckMetricName(family.name)) << family.name;
    EXPECT_FALSE(family.help.empty()) << family.name;
    const bool total =
        family.name.size() > 6 && family.name.compare(family.name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(total, family.type == MetricType::Counter) << family.name;
    EXPECT_EQ(family.name.rfind("rocenet_", 0), 0u) << family.name;
    for (const ClientMetric& metric : family.metric) {
      for (const ClientMetric::Label& label : metric.label) {
        EXPECT_TRUE(prometheus::CheckLabelName(label.name)) << family.name << " " << label.name;
      }
    }
  }
}

TEST_F(MetricsTest, EveryFamilyExistsEvenWithoutSamples) {
  const std::vector<MetricFamily> empty = BuildMetrics(node::NodeSnapshot(), "1.2.3");
  for (const char* name :
       {"rocenet_lldp_frames_received_total", "rocenet_lldp_frames_discarded_total",
        "rocenet_lldp_tlvs_discarded_total", "rocenet_lldp_tlvs_unrecognized_total",
        "rocenet_lldp_socket_errors_total", "rocenet_lldp_ageouts_total", "rocenet_lldp_neighbors",
        "rocenet_lldp_neighbor_info", "rocenet_port_provisioned", "rocenet_addressing_plan_info",
        "rocenet_port_addressing_failed", "rocenet_port_link_set_up_total"}) {
    EXPECT_NE(FindFamily(empty, name), nullptr) << name;
    EXPECT_NE(FindFamily(families_, name), nullptr) << name;
  }
}

TEST_F(MetricsTest, LldpCountersForEveryPort) {
  EXPECT_EQ(Samples(families_, "rocenet_lldp_frames_received_total"),
            ByDevice({{"so0", 14}, {"so1", 7}, {"so2", 0}}));
  EXPECT_EQ(Samples(families_, "rocenet_lldp_tlvs_discarded_total"),
            ByDevice({{"so0", 4}, {"so1", 0}, {"so2", 0}}));
  EXPECT_EQ(Samples(families_, "rocenet_lldp_tlvs_unrecognized_total"),
            ByDevice({{"so0", 3}, {"so1", 0}, {"so2", 0}}));
  EXPECT_EQ(Samples(families_, "rocenet_lldp_socket_errors_total"),
            ByDevice({{"so0", 0}, {"so1", 0}, {"so2", 0}}));
  EXPECT_EQ(Samples(families_, "rocenet_lldp_ageouts_total"),
            ByDevice({{"so0", 0}, {"so1", 1}, {"so2", 0}}));
  EXPECT_EQ(Samples(families_, "rocenet_lldp_neighbors"),
            ByDevice({{"so0", 1}, {"so1", 0}, {"so2", 0}}));
}

TEST_F(MetricsTest, DiscardedFramesOnlyForReasonsThatOccurred) {
  const std::map<Labels, double> expected = {
      {{{"device", "so0"}, {"reason", "missing_ttl"}}, 2},
      {{{"device", "so0"}, {"reason", "bad_ttl_length"}}, 1},
  };
  EXPECT_EQ(Samples(families_, "rocenet_lldp_frames_discarded_total"), expected);
}

TEST_F(MetricsTest, NeighborInfo) {
  const std::map<Labels, double> expected = {
      {{{"device", "so0"},
        {"chassis_id", "02:5e:00:ff:00:01"},
        {"port_id", "Ethernet1/1"},
        {"system_name", "leaf1"},
        {"port_description", "no-alert 10.200.1.2/30"}},
       1},
  };
  EXPECT_EQ(Samples(families_, "rocenet_lldp_neighbor_info"), expected);
}

TEST_F(MetricsTest, Addressing) {
  EXPECT_EQ(Samples(families_, "rocenet_port_provisioned"),
            ByDevice({{"so0", 1}, {"so1", 0}, {"so2", 0}}));
  EXPECT_EQ(Samples(families_, "rocenet_port_addressing_failed"),
            ByDevice({{"so0", 0}, {"so1", 0}, {"so2", 0}}));
  const std::map<Labels, double> expected = {
      {{{"device", "so0"},
        {"state", "Ready"},
        {"reason", ""},
        {"local", "10.200.1.1/30"},
        {"peer", "10.200.1.2"}},
       1},
      {{{"device", "so1"},
        {"state", "Refused"},
        {"reason", "PeerIsNetworkAddress"},
        {"local", ""},
        {"peer", ""}},
       1},
      {{{"device", "so2"},
        {"state", "Pending"},
        {"reason", "NoLldpNeighbor"},
        {"local", ""},
        {"peer", ""}},
       1},
  };
  EXPECT_EQ(Samples(families_, "rocenet_addressing_plan_info"), expected);
}

// The rail every part of rocenet groups ports by: a Gaudi port's order in
// its module; a NIC without a module, the fabric network its plan routes;
// none yet, empty. The fleet's recording rules sum per rail through it.
TEST(MetricsRailTest, PortInfoNamesEachPortsRail) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.ports[1].pci.rail = 2;
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  std::map<std::string, std::string> rails;
  for (const auto& [labels, value] : Samples(families, "rocenet_port_info")) {
    EXPECT_EQ(value, 1);
    rails[labels.at("device")] = labels.at("rail");
  }
  EXPECT_EQ(rails, (std::map<std::string, std::string>{
                       {"so0", "10.200.0.0/16"}, {"so1", "2"}, {"so2", ""}}));
}

TEST(MetricsApplyErrorTest, ErrorGaugeFollowsApplyError) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.addressing[0].apply_error = "port so0: add route 10.200.0.0/16: Network unreachable";
  snapshot.addressing[0].provisioned = false;
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  EXPECT_EQ(Samples(families, "rocenet_port_addressing_failed"),
            ByDevice({{"so0", 1}, {"so1", 0}, {"so2", 0}}));
  EXPECT_EQ(Samples(families, "rocenet_port_provisioned"),
            ByDevice({{"so0", 0}, {"so1", 0}, {"so2", 0}}));
}

TEST(MetricsUninstalledTest, OneOnceUninstallRan) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  EXPECT_EQ(Samples(BuildMetrics(snapshot, "1.2.3"), "rocenet_node_uninstalled"),
            (std::map<Labels, double>{{Labels{}, 0}}));
  snapshot.uninstalled = true;
  EXPECT_EQ(Samples(BuildMetrics(snapshot, "1.2.3"), "rocenet_node_uninstalled"),
            (std::map<Labels, double>{{Labels{}, 1}}));
}

TEST(MetricsUtf8Test, LabelsFromHostileNeighborsAreValidUtf8) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.neighbors["0000:19:00.0-p8"].neighbors = {HostileNeighbor()};
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  for (const MetricFamily& family : families) {
    for (const ClientMetric& metric : family.metric) {
      for (const ClientMetric::Label& label : metric.label) {
        EXPECT_EQ(ValidUtf8(label.value), label.value) << family.name << " " << label.name;
      }
    }
  }
  const MetricFamily* info = FindFamily(families, "rocenet_lldp_neighbor_info");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->metric.size(), 1u);
  const Labels labels = LabelsOf(info->metric[0]);
  EXPECT_EQ(labels.at("system_name"),
            "sw\xEF\xBF\xBD\xEF\xBF\xBD"
            "1");
  EXPECT_EQ(labels.at("chassis_id"), "c3:a9");
  EXPECT_EQ(labels.at("port_id"), "ff");
}

TEST_F(MetricsTest, TextExposition) {
  const std::string text = prometheus::TextSerializer().Serialize(families_);
  EXPECT_THAT(text, HasSubstr("# TYPE rocenet_lldp_frames_received_total counter\n"));
  EXPECT_THAT(text, HasSubstr("rocenet_lldp_frames_received_total{device=\"so0\"} 14\n"));
  EXPECT_THAT(text, HasSubstr("rocenet_lldp_frames_discarded_total{device=\"so0\","
                              "reason=\"missing_ttl\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("rocenet_addressing_plan_info{device=\"so1\",state=\"Refused\","
                              "reason=\"PeerIsNetworkAddress\",local=\"\",peer=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE rocenet_port_provisioned gauge\n"));
}

TEST(MetricsEmptyTest, NoPortsNoSamples) {
  const std::vector<MetricFamily> families = BuildMetrics(node::NodeSnapshot(), "1.2.3");
  const MetricFamily* info = FindFamily(families, "rocenet_lldp_neighbor_info");
  ASSERT_NE(info, nullptr);
  EXPECT_THAT(info->metric, IsEmpty());
}

}  // namespace
}  // namespace rocenet::api
