// SPDX-License-Identifier: Apache-2.0
// What the API and the metrics show of a port's PFC: dcbnl's settings and
// counters where the port has them, the driver's ethtool pause counters
// where it has only those, nothing made up where it has neither.
#include <map>
#include <string>

#include "daemon/api/metrics.h"
#include "daemon/api/proto_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/api/fake_node_state.h"

namespace rocenet::api {
namespace {

using ::prometheus::MetricFamily;
using ::rocenet::api::testing::SampleSnapshot;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Series = std::map<std::pair<std::string, std::string>, double>;  // (device, priority)

Series PfcSamples(const std::vector<MetricFamily>& families, const std::string& name) {
  Series out;
  bool found = false;
  for (const MetricFamily& family : families) {
    if (family.name != name) continue;
    found = true;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& label : metric.label) labels[label.name] = label.value;
      out[{labels["device"], labels["priority"]}] = family.type == prometheus::MetricType::Counter
                                                        ? metric.counter.value
                                                        : metric.gauge.value;
    }
  }
  EXPECT_TRUE(found) << name;
  return out;
}

node::NodeSnapshot WithPfc() {
  node::NodeSnapshot snapshot = SampleSnapshot();
  qos::PortPfc& so0 = snapshot.pfc[snapshot.ports[0].id];
  so0.name = snapshot.ports[0].name;
  so0.supported = true;
  so0.settings.capability = 4;
  so0.settings.enabled = 0x0f;
  so0.settings.requests[3] = 11;
  so0.settings.indications[3] = 22;
  qos::PortPfc& so1 = snapshot.pfc[snapshot.ports[1].id];
  so1.name = snapshot.ports[1].name;
  so1.problem = "NoDcb";
  snapshot.pfc_request = *qos::ParsePfcRequest("all");
  return snapshot;
}

TEST(PfcApiTest, MetricsPerPriorityForPortsWithDcb) {
  const std::vector<MetricFamily> families = BuildMetrics(WithPfc(), "1.2.3");
  const Series enabled = PfcSamples(families, "rocenet_port_pfc_enabled");
  EXPECT_EQ(enabled.size(), 8u) << "so0 only: the others have no dcbnl";
  EXPECT_EQ(enabled.at({"so0", "3"}), 1);
  EXPECT_EQ(enabled.at({"so0", "4"}), 0);
  EXPECT_EQ(PfcSamples(families, "rocenet_port_pfc_pause_frames_sent_total").at({"so0", "3"}), 11);
  EXPECT_EQ(PfcSamples(families, "rocenet_port_pfc_pause_frames_received_total").at({"so0", "3"}),
            22);
}

TEST(PfcApiTest, EthtoolPauseCountersWhereThereIsNoDcb) {
  node::NodeSnapshot snapshot = WithPfc();
  inventory::MacCounters mac;
  mac.pfc_sent[3] = 5;
  mac.pfc_received[3] = 6;
  snapshot.ports[1].mac = mac;
  const std::vector<MetricFamily> families = BuildMetrics(snapshot, "1.2.3");
  const Series sent = PfcSamples(families, "rocenet_port_pfc_pause_frames_sent_total");
  EXPECT_EQ(sent.at({"so1", "3"}), 5);
  EXPECT_EQ(sent.count({"so1", "2"}), 0u) << "no counter, no series";
  EXPECT_EQ(PfcSamples(families, "rocenet_port_pfc_pause_frames_received_total").at({"so1", "3"}),
            6);
  EXPECT_EQ(PfcSamples(families, "rocenet_port_pfc_enabled").count({"so1", "3"}), 0u);
}

TEST(PfcApiTest, NoPfcNoSeries) {
  const std::vector<MetricFamily> families = BuildMetrics(SampleSnapshot(), "1.2.3");
  EXPECT_THAT(PfcSamples(families, "rocenet_port_pfc_enabled"), IsEmpty());
  EXPECT_THAT(PfcSamples(families, "rocenet_port_pfc_pause_frames_sent_total"), IsEmpty());
}

TEST(PfcApiTest, ThePortMessageCarriesItsPfc) {
  const node::NodeSnapshot snapshot = WithPfc();
  v1::Port so0;
  ToProto(snapshot, snapshot.ports[0], &so0);
  ASSERT_TRUE(so0.has_pfc());
  EXPECT_TRUE(so0.pfc().supported());
  EXPECT_EQ(so0.pfc().capability(), 4u);
  EXPECT_THAT(so0.pfc().enabled_priorities(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(so0.pfc().pause_sent(3), 11u);
  EXPECT_EQ(so0.pfc().pause_received(3), 22u);
  EXPECT_EQ(so0.pfc().requested(), "all");
  v1::Port so1;
  ToProto(snapshot, snapshot.ports[1], &so1);
  EXPECT_FALSE(so1.pfc().supported());
  EXPECT_EQ(so1.pfc().problem(), "NoDcb");
  EXPECT_THAT(so1.pfc().pause_sent(), IsEmpty());
  v1::Port so2;
  ToProto(snapshot, snapshot.ports[2], &so2);
  EXPECT_FALSE(so2.has_pfc()) << "never read";
}

TEST(PfcApiTest, AdvisoryConditionsSaySo) {
  health::PortHealth health;
  health.conditions.push_back({"PfcMismatch", "SwitchDiffers", "m", absl::UnixEpoch(), true});
  v1::PortHealth out;
  ToProto(health, &out);
  EXPECT_TRUE(out.conditions(0).advisory());
}

}  // namespace
}  // namespace rocenet::api
