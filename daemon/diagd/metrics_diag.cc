// SPDX-License-Identifier: Apache-2.0
// The diagnostics metric families: the latest result of each test.
#include "daemon/diagd/metrics_diag.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/api/metric_families.h"

namespace rocenet::diagd {

using api::metrics_internal::AddSample;
using api::metrics_internal::Family;
using prometheus::MetricFamily;
using prometheus::MetricType;

void DiagMetrics::Count(const std::string& test, bool ok) {
  runs_[{test, ok ? "success" : "failure"}] += 1;
  runs_[{test, ok ? "failure" : "success"}] += 0;
  last_run_[test] = absl::ToDoubleSeconds(now_() - absl::UnixEpoch());
}

void DiagMetrics::Record(const v1::ReachResult& result) {
  absl::MutexLock lock(&mu_);
  reach_ = result;
  Count("reach", result.ok());
}

void DiagMetrics::Record(const v1::RdmaResult& result) {
  absl::MutexLock lock(&mu_);
  rdma_ = result;
  Count("rdma", result.ok());
}

void DiagMetrics::Record(const v1::BandwidthResult& result) {
  absl::MutexLock lock(&mu_);
  bandwidth_ = result;
  Count("bandwidth", result.ok());
}

void DiagMetrics::Record(const v1::AllreduceResult& result) {
  absl::MutexLock lock(&mu_);
  allreduce_ = result;
  Count("allreduce", result.ok());
}

void DiagMetrics::Record(const v1::IncastResult& result) {
  absl::MutexLock lock(&mu_);
  incast_ = result;
  Count("incast", result.ok());
}

std::vector<MetricFamily> DiagMetrics::Collect() const {
  absl::MutexLock lock(&mu_);
  std::vector<MetricFamily> out;

  MetricFamily runs =
      Family("rocenet_diag_runs_total", "Diagnostics run through this daemon, by test and result.",
             MetricType::Counter);
  for (const auto& [key, value] : runs_) {
    AddSample(runs, {{"test", key.first}, {"result", key.second}}, value);
  }
  out.push_back(std::move(runs));
  MetricFamily last =
      Family("rocenet_diag_last_run_timestamp_seconds",
             "When each test last ended, in seconds since the epoch.", MetricType::Gauge);
  for (const auto& [test, value] : last_run_) AddSample(last, {{"test", test}}, value);
  out.push_back(std::move(last));

  MetricFamily refused = Family("rocenet_diag_peer_refused_total",
                                "Data port connections refused, by reason: rate_limited, "
                                "unauthenticated, bad_mac, stale, replayed, malformed.",
                                MetricType::Counter);
  if (refusals_ != nullptr) {
    for (const auto& [reason, count] : refusals_()) {
      AddSample(refused, {{"reason", reason}}, static_cast<double>(count));
    }
  }
  out.push_back(std::move(refused));

  // Reach: per port and kind of target (the port's switch, or its peers),
  // never one series per target: a mesh of N ports has N^2 pairs. Each
  // target is in `rocectl diag reach --matrix -o json`.
  MetricFamily rtt = Family("rocenet_diag_reach_rtt_seconds",
                            "Last reach run: the echo round-trip time percentile of the "
                            "port's gateway, or over every echo to its peers.",
                            MetricType::Gauge);
  MetricFamily loss = Family("rocenet_diag_reach_loss_ratio",
                             "Last reach run: the highest share of echoes not answered (0..1) "
                             "among the port's targets of that kind.",
                             MetricType::Gauge);
  MetricFamily unreachable = Family(
      "rocenet_diag_reach_unreachable_targets",
      "Last reach run: targets of that kind that did not answer the port.", MetricType::Gauge);
  for (const v1::PortReach& port : reach_.ports()) {
    struct Worst {
      double p50 = 0, p90 = 0, p99 = 0, loss = 0;
      int unreachable = 0;
    };
    std::map<std::string, Worst> by_kind;
    for (const v1::ReachTarget& t : port.targets()) {
      Worst& w = by_kind[t.kind()];
      w.p50 = std::max(w.p50, t.rtt_p50_seconds());
      w.p90 = std::max(w.p90, t.rtt_p90_seconds());
      w.p99 = std::max(w.p99, t.rtt_p99_seconds());
      w.loss = std::max(w.loss, t.loss_ratio());
      if (!t.reachable()) ++w.unreachable;
    }
    // The peers' round trips over all their echoes, from the port's figures:
    // a reduced result lists only the peers that lost one.
    if (port.peers_probed() > 0) {
      Worst& w = by_kind["peer"];
      w.p50 = port.peer_rtt_p50_seconds();
      w.p90 = port.peer_rtt_p90_seconds();
      w.p99 = port.peer_rtt_p99_seconds();
      w.unreachable = static_cast<int>(port.peers_failed());
    }
    for (const auto& [kind, w] : by_kind) {
      const std::vector<prometheus::ClientMetric::Label> base = {
          {"node", port.node()}, {"device", port.port()}, {"kind", kind}};
      for (const auto& [q, v] :
           {std::pair<const char*, double>{"p50", w.p50}, {"p90", w.p90}, {"p99", w.p99}}) {
        // Not "quantile": Prometheus keeps that label for summaries.
        auto labels = base;
        labels.push_back({"percentile", q});
        AddSample(rtt, labels, v);
      }
      AddSample(loss, base, w.loss);
      AddSample(unreachable, base, w.unreachable);
    }
  }
  out.push_back(std::move(rtt));
  out.push_back(std::move(loss));
  out.push_back(std::move(unreachable));

  // Base units: bytes, whatever the CLI shows.
  // The ethernet stage (TCP through the netdev) and the rdma stage (the RDMA
  // benchmark, client to server) side by side, told apart by `stage`.
  MetricFamily bw = Family("rocenet_diag_bandwidth_bytes_per_second",
                           "Last bandwidth run of each stage: throughput per link and direction.",
                           MetricType::Gauge);
  for (const v1::DirectionResult& d : bandwidth_.directions()) {
    AddSample(bw,
              {{"device", bandwidth_.port()},
               {"peer", bandwidth_.peer()},
               {"direction", d.direction()},
               {"stage", "ethernet"}},
              d.bits_per_second() / 8);
  }
  MetricFamily rdma_lat =
      Family("rocenet_diag_rdma_latency_seconds",
             "Last RDMA latency run: one-way latency percentiles per link.", MetricType::Gauge);
  for (const v1::RdmaLink& link : rdma_.links()) {
    if (!link.skipped().empty() || !link.error().empty()) continue;
    using Labels = std::vector<prometheus::ClientMetric::Label>;
    const Labels base = {{"device", link.from_port()}, {"peer", link.to_node()}};
    if (link.bits_per_second() > 0) {
      Labels labels = base;
      labels.push_back({"direction", "transmit"});
      labels.push_back({"stage", "rdma"});
      AddSample(bw, labels, link.bits_per_second() / 8);
    }
    if (link.latency_p50_seconds() > 0) {
      for (const auto& [q, v] : {std::pair<const char*, double>{"p50", link.latency_p50_seconds()},
                                 {"p99", link.latency_p99_seconds()}}) {
        Labels labels = base;
        labels.push_back({"percentile", q});
        AddSample(rdma_lat, labels, v);
      }
    }
  }
  out.push_back(std::move(bw));
  out.push_back(std::move(rdma_lat));

  MetricFamily busbw = Family("rocenet_diag_allreduce_bus_bandwidth_bytes_per_second",
                              "Last all-reduce run: bus bandwidth (nccl-tests busbw) of the "
                              "largest size, per rail.",
                              MetricType::Gauge);
  MetricFamily algbw = Family("rocenet_diag_allreduce_algorithm_bandwidth_bytes_per_second",
                              "Last all-reduce run: algorithm bandwidth (size / time) of the "
                              "largest size, per rail.",
                              MetricType::Gauge);
  MetricFamily broken =
      Family("rocenet_diag_allreduce_rail_broken",
             "Last all-reduce run: whether the rail's ring failed.", MetricType::Gauge);
  for (const v1::RailResult& rail : allreduce_.rails()) {
    AddSample(broken, {{"rail", rail.rail()}}, rail.broken() ? 1 : 0);
    if (rail.sizes().empty()) continue;
    const v1::AllreduceSize& largest = rail.sizes(rail.sizes_size() - 1);
    AddSample(busbw, {{"rail", rail.rail()}}, largest.busbw_bytes_per_second());
    AddSample(algbw, {{"rail", rail.rail()}}, largest.algbw_bytes_per_second());
  }
  out.push_back(std::move(busbw));
  out.push_back(std::move(algbw));
  out.push_back(std::move(broken));

  MetricFamily fairness =
      Family("rocenet_diag_incast_fairness_ratio",
             "Last incast run: Jain's fairness index over the senders.", MetricType::Gauge);
  MetricFamily incast_bw = Family("rocenet_diag_incast_bytes_per_second",
                                  "Last incast run: throughput per sender.", MetricType::Gauge);
  MetricFamily retrans =
      Family("rocenet_diag_incast_retransmits",
             "Last incast run: TCP retransmissions of all senders.", MetricType::Gauge);
  if (!incast_.port().empty()) {
    AddSample(fairness, {{"device", incast_.port()}}, incast_.fairness());
    AddSample(retrans, {{"device", incast_.port()}}, incast_.retransmits());
    for (const v1::IncastSender& s : incast_.senders()) {
      AddSample(incast_bw, {{"device", incast_.port()}, {"sender", s.node()}},
                s.bits_per_second() / 8);
    }
  }
  out.push_back(std::move(fairness));
  out.push_back(std::move(incast_bw));
  out.push_back(std::move(retrans));
  return out;
}

}  // namespace rocenet::diagd
