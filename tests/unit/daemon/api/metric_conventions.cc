// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/daemon/api/metric_conventions.h"

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rocenet::api::testing {
namespace {

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
      {"stage", std::regex("ethernet|rdma")},
      // Percentiles of gauges; "quantile" is Prometheus's label of summaries.
      {"percentile", std::regex("p[0-9]+")},
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
    "rocenet_node_managed_ports",
    "rocenet_node_uninstalled",
    "rocenet_attach_operations_total",
    "rocenet_attach_duration_seconds",
    "rocenet_reserved_ports",
    "rocenet_config_reloads_total",
    "rocenet_config_last_reload_success_timestamp_seconds",
    "rocenet_config_last_reload_successful",
    "rocenet_diag_runs_total",
    "rocenet_diag_peer_refused_total",
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

}  // namespace

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

}  // namespace rocenet::api::testing
