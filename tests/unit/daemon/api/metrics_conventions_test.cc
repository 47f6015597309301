// Scrapes rocenetd's metrics collectable (NodeMetrics over a fake node state,
// as the exposer does), parses the text exposition strictly and holds every
// family to the Prometheus and node_exporter naming conventions of
// DESIGN.md 3.9. Also checks the health and attachment families' values.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/api/metrics.h"
#include "daemon/api/metrics_config.h"
#include "daemon/api/metrics_diag.h"
#include "daemon/lldp/decode_error.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "tests/unit/daemon/api/fake_node_state.h"

namespace rocenet::api {
namespace {

using ::rocenet::api::testing::FakeNodeState;
using ::rocenet::api::testing::kNow;
using ::rocenet::api::testing::SampleSnapshot;
using Labels = std::map<std::string, std::string>;

// ---- A strict parser of the text format (version 0.0.4) -------------------

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

struct ParsedFamily {
  std::string help;
  std::string type;
  std::vector<Sample> samples;
};

// Parses `{a="x",b="y"}` at `pos`; escapes \\, \" and \n only.
bool ParseLabels(const std::string& line, size_t& pos, Labels& out, std::string& error) {
  static const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");
  ++pos;  // '{'
  while (pos < line.size() && line[pos] != '}') {
    const size_t eq = line.find('=', pos);
    if (eq == std::string::npos) return (error = "label without '='"), false;
    const std::string name = line.substr(pos, eq - pos);
    if (!std::regex_match(name, kLabelName)) return (error = "bad label name " + name), false;
    pos = eq + 1;
    if (pos >= line.size() || line[pos] != '"') return (error = "unquoted label value"), false;
    ++pos;
    std::string value;
    for (;;) {
      if (pos >= line.size()) return (error = "unterminated label value"), false;
      const char c = line[pos++];
      if (c == '"') break;
      if (c == '\\') {
        if (pos >= line.size()) return (error = "dangling escape"), false;
        const char e = line[pos++];
        if (e == 'n') {
          value += '\n';
        } else if (e == '\\' || e == '"') {
          value += e;
        } else {
          return (error = std::string("bad escape \\") + e), false;
        }
      } else {
        value += c;
      }
    }
    if (out.count(name) != 0) return (error = "label repeated: " + name), false;
    out[name] = value;
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
  if (pos >= line.size()) return (error = "unterminated label set"), false;
  ++pos;  // '}'
  return true;
}

std::optional<double> ParseValue(const std::string& text) {
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  if (text == "NaN") return NAN;
  static const std::regex kNumber(R"([-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)");
  if (!std::regex_match(text, kNumber)) return std::nullopt;
  return std::stod(text);
}

// Fails the test on anything a strict scraper would reject: samples before
// their family's TYPE, HELP/TYPE given twice, a family split in two,
// unparsable lines or values.
std::map<std::string, ParsedFamily> ParseExposition(const std::string& text) {
  std::map<std::string, ParsedFamily> families;
  std::string current;
  std::set<std::string> closed;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  auto family_of = [&](const std::string& sample) -> std::string {
    if (families.count(sample) != 0) return sample;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s(suffix);
      if (sample.size() > s.size() && sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
        const std::string base = sample.substr(0, sample.size() - s.size());
        if (families.count(base) != 0 && families[base].type == "histogram") return base;
      }
    }
    return "";
  };
  while (std::getline(in, line)) {
    ++number;
    const std::string where = "line " + std::to_string(number) + ": " + line;
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const bool help = line[2] == 'H';
      const size_t space = line.find(' ', 7);
      const std::string name = line.substr(7, space == std::string::npos ? space : space - 7);
      const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
      if (name != current) {
        EXPECT_EQ(closed.count(name), 0u) << "family split: " << where;
        if (!current.empty()) closed.insert(current);
        current = name;
      }
      ParsedFamily& family = families[name];
      if (help) {
        EXPECT_TRUE(family.help.empty()) << "HELP twice: " << where;
        EXPECT_TRUE(family.type.empty()) << "HELP after TYPE: " << where;
        family.help = rest;
      } else {
        EXPECT_TRUE(family.type.empty()) << "TYPE twice: " << where;
        EXPECT_TRUE(rest == "counter" || rest == "gauge" || rest == "histogram")
            << "type: " << where;
        family.type = rest;
      }
      continue;
    }
    EXPECT_NE(line[0], '#') << "unknown comment: " << where;
    if (line[0] == '#') continue;
    Sample sample;
    size_t pos = line.find_first_of("{ ");
    if (pos == std::string::npos) {
      ADD_FAILURE() << "no value: " << where;
      continue;
    }
    sample.name = line.substr(0, pos);
    std::string error;
    if (line[pos] == '{' && !ParseLabels(line, pos, sample.labels, error)) {
      ADD_FAILURE() << error << ": " << where;
      continue;
    }
    if (pos >= line.size() || line[pos] != ' ') {
      ADD_FAILURE() << "no space before the value: " << where;
      continue;
    }
    const std::optional<double> value = ParseValue(line.substr(pos + 1));
    if (!value.has_value()) {
      ADD_FAILURE() << "bad value: " << where;
      continue;
    }
    sample.value = *value;
    const std::string family = family_of(sample.name);
    if (family.empty() || family != current || families[family].type.empty()) {
      ADD_FAILURE() << "sample outside its family's HELP/TYPE block: " << where;
      continue;
    }
    families[family].samples.push_back(std::move(sample));
  }
  return families;
}

// ---- The conventions -------------------------------------------------------

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Labels with a closed set of values that any family may carry, and the
// values each may take ("" = any from the regex).
const std::map<std::string, std::regex>& EnumLabels() {
  static const auto* labels = new std::map<std::string, std::regex>{
      {"device", std::regex("[a-zA-Z0-9_.:@-]{1,15}")},  // a Linux interface name
      {"condition", std::regex("[A-Z][A-Za-z]+")},
      {"operation", std::regex("attach|detach|check|gc")},
      // One vocabulary for every outcome.
      {"result", std::regex("success|failure")},
      {"reason", std::regex("[a-z][a-z0-9_]*")},  // snake_case codes, never prose
      // Diagnostics: the tests, and the nodes, addresses and rails of the
      // last run (bounded by the cluster, never prose).
      {"test", std::regex("[a-z]+")},
      {"kind", std::regex("[a-z]+")},
      {"direction", std::regex("receive|transmit")},
      {"quantile", std::regex("0\\.[0-9]+")},
      {"node", std::regex("[A-Za-z0-9_.:-]+")},
      {"peer", std::regex("[A-Za-z0-9_.:-]+")},
      {"sender", std::regex("[A-Za-z0-9_.:-]+")},
      {"rail", std::regex("[0-9.]+/[0-9]+")},
      {"le", std::regex(".*")},  // histograms only, checked below
  };
  return *labels;
}

// Words that name a unit; a family holding one must end in it (before
// _total). Base units only: no milliseconds, bits, megabytes or percent.
const std::set<std::string> kBaseUnits = {"seconds", "bytes", "ratio"};
const std::set<std::string> kNonBaseUnits = {
    "milliseconds", "ms",        "microseconds", "minutes", "hours",   "bits",         "kilobytes",
    "megabytes",    "gigabytes", "mbps",         "gbps",    "percent", "celsius_milli"};

// Families of the node as a whole; every other family is per port.
const std::set<std::string> kNodeFamilies = {
    "rocenet_build_info",
    "rocenet_node_ready",
    "rocenet_attach_operations_total",
    "rocenet_attach_duration_seconds",
    "rocenet_config_reloads_total",
    "rocenet_config_last_reload_success_timestamp_seconds",
    "rocenet_config_last_reload_successful",
    "rocenet_diag_runs_total",
    "rocenet_diag_last_run_timestamp_seconds",
    "rocenet_diag_allreduce_bus_bandwidth_bytes_per_second",
    "rocenet_diag_allreduce_algorithm_bandwidth_bytes_per_second",
    "rocenet_diag_allreduce_rail_broken",
};

std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> words;
  std::stringstream in(name);
  for (std::string word; std::getline(in, word, '_');) words.push_back(word);
  return words;
}

void CheckFamily(const std::string& name, const ParsedFamily& family) {
  SCOPED_TRACE(name);
  static const std::regex kName("rocenet_[a-z][a-z0-9]*(_[a-z0-9]+)*");
  EXPECT_TRUE(std::regex_match(name, kName)) << "name not snake_case under rocenet_";

  EXPECT_FALSE(family.help.empty()) << "no HELP";
  EXPECT_TRUE(EndsWith(family.help, ".")) << "HELP is not a sentence: " << family.help;

  const bool counter = family.type == "counter";
  EXPECT_EQ(EndsWith(name, "_total"), counter) << "_total iff counter (type " << family.type << ")";
  const bool info = EndsWith(name, "_info");
  if (info) {
    EXPECT_EQ(family.type, "gauge");
  }
  if (family.type == "histogram") {
    EXPECT_TRUE(EndsWith(name, "_seconds") || EndsWith(name, "_bytes")) << "histogram unit";
  }

  // Units: base units only, and the unit is the last word before _total
  // (or before _per_second, a rate the value already is).
  const std::vector<std::string> words = Words(name);
  size_t last = words.size() - (counter ? 2 : 1);
  if (EndsWith(name, "_per_second")) last -= 2;
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(kNonBaseUnits.count(words[i]), 0u) << "non-base unit " << words[i];
    if (kBaseUnits.count(words[i]) != 0) {
      EXPECT_EQ(i, last) << "unit " << words[i] << " is not the suffix";
    }
  }
  for (const char* word : {"rate", "avg", "average", "percentage"}) {
    EXPECT_EQ(std::count(words.begin(), words.end(), word), 0) << "derived value " << word;
  }

  std::set<Labels> seen;
  std::set<std::string> label_names;
  for (const Sample& sample : family.samples) {
    EXPECT_TRUE(std::isfinite(sample.value) || sample.labels.count("le") != 0)
        << sample.name << " value " << sample.value;
    if (counter) {
      EXPECT_GE(sample.value, 0) << sample.name;
    }
    if (info) {
      EXPECT_EQ(sample.value, 1) << "an _info sample is always 1";
    }
    if (family.type != "histogram") {
      EXPECT_TRUE(seen.insert(sample.labels).second) << "duplicate series";
    }
    for (const auto& [label, value] : sample.labels) {
      label_names.insert(label);
      EXPECT_TRUE(label != "interface" && label != "ifname" && label != "port" &&
                  label != "iface" && label != "dev")
          << "the interface label is `device`, not " << label;
      if (label == "le") {
        EXPECT_EQ(family.type, "histogram") << "le outside a histogram";
      }
      auto known = EnumLabels().find(label);
      if (info && label != "device") {
        // An _info family is where text belongs.
      } else if (known != EnumLabels().end()) {
        EXPECT_TRUE(std::regex_match(value, known->second))
            << "label " << label << "=\"" << value << "\"";
      } else {
        // Anything else is text: identities, addresses, messages.
        EXPECT_TRUE(info) << "free-text label " << label << " outside an _info family";
      }
    }
    if (kNodeFamilies.count(name) == 0) {
      EXPECT_EQ(sample.labels.count("device"), 1u) << "per-port sample without device";
    } else {
      EXPECT_EQ(sample.labels.count("device"), 0u) << "node-wide sample with device";
    }
  }

  if (family.type == "histogram") {
    std::map<Labels, std::vector<std::pair<double, double>>> buckets;
    std::map<Labels, double> counts;
    for (const Sample& sample : family.samples) {
      Labels series = sample.labels;
      series.erase("le");
      if (sample.name == name + "_bucket") {
        ASSERT_EQ(sample.labels.count("le"), 1u);
        buckets[series].emplace_back(*ParseValue(sample.labels.at("le")), sample.value);
      } else if (sample.name == name + "_count") {
        counts[series] = sample.value;
      } else {
        EXPECT_EQ(sample.name, name + "_sum");
      }
    }
    EXPECT_FALSE(buckets.empty());
    for (const auto& [series, list] : buckets) {
      ASSERT_FALSE(list.empty());
      EXPECT_TRUE(std::isinf(list.back().first)) << "last bucket is not +Inf";
      for (size_t i = 1; i < list.size(); ++i) {
        EXPECT_LT(list[i - 1].first, list[i].first) << "bounds not increasing";
        EXPECT_LE(list[i - 1].second, list[i].second) << "buckets not cumulative";
      }
      EXPECT_EQ(counts[series], list.back().second) << "_count differs from the +Inf bucket";
    }
  }
}

// ---- The snapshot scraped ---------------------------------------------------

NodeSnapshot ScrapedSnapshot() {
  NodeSnapshot snapshot = SampleSnapshot();
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
  snapshot.attach.Record(AttachOperation::kAttach, true, absl::Milliseconds(40));
  snapshot.attach.Record(AttachOperation::kAttach, true, absl::Milliseconds(300));
  snapshot.attach.Record(AttachOperation::kAttach, false, absl::Seconds(7));
  snapshot.attach.Record(AttachOperation::kCheck, true, absl::Milliseconds(2));
  snapshot.attach.Record(AttachOperation::kDetach, true, absl::Milliseconds(30));
  return snapshot;
}

// The diagnostics after one run of each test.
void RecordDiagnostics(DiagMetrics& diag) {
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
    DiagMetrics diag;
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
           "rocenet_addressing_plan_info",
           "rocenet_attach_operations_total",
           "rocenet_attach_duration_seconds",
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
  EXPECT_EQ(Values("rocenet_diag_reach_unreachable_targets"),
            (std::map<Labels, double>{
                {{{"device", "so0"}, {"kind", "gateway"}, {"node", "node-a"}}, 0},
                {{{"device", "so0"}, {"kind", "peer"}, {"node", "node-a"}}, 1}}));
  const std::map<Labels, double> rtt = Values("rocenet_diag_reach_rtt_seconds");
  EXPECT_EQ(rtt.size(), 6u);  // 2 kinds x 3 quantiles
  EXPECT_DOUBLE_EQ(
      rtt.at({{"device", "so0"}, {"kind", "peer"}, {"node", "node-a"}, {"quantile", "0.5"}}),
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
