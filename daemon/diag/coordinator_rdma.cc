// SPDX-License-Identifier: Apache-2.0
// Coordinator::Rdma: the RDMA stage, one link or every link of a ring per
// rail.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/rdma_verdict.h"
#include "daemon/diag/stage.h"

namespace rocenet::diag {

using coordinator::ParallelFor;

namespace {

RdmaParams ParamsOf(const RdmaRequest& request, uint16_t tool_port) {
  return {.test = request.test,
          .message_bytes = request.message_bytes,
          .duration_ms = request.duration_ms,
          .iterations = request.iterations,
          .tool_port = tool_port};
}

// The links of a ring of n nodes (i -> i+1, the last to the first), in
// phases whose links share no node, so that no NIC runs two benchmarks at
// once: the even-numbered links, the odd ones, then the last of an odd ring.
std::vector<std::vector<size_t>> Phases(size_t n) {
  if (n == 2) return {{0}, {1}};
  std::vector<std::vector<size_t>> phases(n % 2 == 0 ? 2 : 3);
  for (size_t i = 0; i < n; ++i) {
    if (n % 2 == 1 && i == n - 1) {
      phases[2].push_back(i);
    } else {
      phases[i % 2].push_back(i);
    }
  }
  return phases;
}

// Marks the slowest measured link of each rail and those below the
// threshold; adds the problems and notes.
void Judge(double min_fraction, RdmaResult* result) {
  std::map<std::string, RdmaLink*> slowest;
  std::map<std::string, int> measured;
  for (RdmaLink& link : result->links) {
    const std::string name =
        absl::StrCat(link.from_node, "/", link.from_port, " -> ", link.to_node, "/", link.to_port);
    if (!link.error.empty()) {
      result->problems.push_back(absl::StrCat("rail ", link.rail, ": ", name, ": ", link.error));
      continue;
    }
    if (!link.skipped.empty()) {
      result->stage.notes.push_back(absl::StrCat(name, " not measured: ", link.skipped));
      continue;
    }
    if (link.bits_per_second <= 0) continue;
    ++measured[link.rail];
    RdmaLink*& worst = slowest[link.rail];
    if (worst == nullptr || link.bits_per_second < worst->bits_per_second) worst = &link;
    if (min_fraction > 0 && link.link_bits_per_second > 0 && link.fraction_of_link < min_fraction) {
      link.below_expected = true;
      result->problems.push_back(absl::StrFormat(
          "rail %s: %s: %.2f Gb/s is %.0f%% of the link's %.0f Gb/s (expected %.0f%% or more)",
          link.rail, name, link.bits_per_second / 1e9, link.fraction_of_link * 100,
          link.link_bits_per_second / 1e9, min_fraction * 100));
    }
  }
  for (auto& [rail, link] : slowest) {
    if (measured[rail] >= 2) link->slowest = true;
  }
}

}  // namespace

absl::StatusOr<RdmaResult> Coordinator::RunRdma(const RdmaRequest& request,
                                                const Progress& progress, CallGroup& stop) {
  RdmaResult result;
  StagePath* stage = &result.stage;
  stage->stage = kRdmaStage;
  stage->path =
      absl::StrCat("RDMA ", request.test == "write_lat" ? "write latency" : "write bandwidth",
                   " through each port's RDMA device and RoCE v2 GID (perftest, or "
                   "Habana's tool on hbl devices)");
  Verdict verdict(kRdmaStage, false, "");
  std::vector<std::string> rail_list;
  if (!request.port.empty()) {
    if (parts_.rdma == nullptr) return absl::FailedPreconditionError("no RDMA stage here");
    absl::StatusOr<std::vector<LocalPort>> local = parts_.ports();
    if (!local.ok()) return local.status();
    ASSIGN_OR_RETURN(const LocalPort* port, PortNamed(*local, request.port));
    const NodeAddress peer = *ParseNodeAddress(request.peer);
    RETURN_IF_ERROR(coordinator::CheckPeerInRail(*port, peer));
    progress(absl::StrCat(request.test, ": ", port->name, " -> ", peer.ToString()), 0);
    result.nodes.push_back(parts_.node_name);
    result.links.push_back(
        parts_.rdma->Measure(*port, peer, ParamsOf(request, kRdmaToolPort), &stop));
    result.nodes.push_back(result.links[0].to_node);
    rail_list.push_back(port->rail);
    verdict.nodes = {{parts_.node_name, NodeAddress{}}, {result.links[0].to_node, peer}};
  } else {
    const std::vector<NodeAddress> asked = coordinator::ParseNodes(request.nodes);
    progress(absl::StrCat("asking ", asked.size(), " daemons for their ports"), 0);
    const std::vector<absl::StatusOr<peer::PeerInfo>> asked_infos = Infos(asked, stop);
    if (stop.abandoned()) return coordinator::Stopped();
    // A node whose daemon did not answer is not measured; the ring goes
    // around the others.
    std::vector<NodeAddress> nodes;
    std::vector<const peer::PeerInfo*> infos;
    for (size_t i = 0; i < asked.size(); ++i) {
      const std::string name = coordinator::NameOf(asked_infos[i], asked[i]);
      result.nodes.push_back(name);
      verdict.nodes.emplace_back(name, asked[i]);
      if (!asked_infos[i].ok()) {
        result.not_measured.push_back(
            {.node = name, .reason = std::string(asked_infos[i].status().message())});
        verdict.unmeasured.insert(name);
        continue;
      }
      nodes.push_back(asked[i]);
      infos.push_back(&*asked_infos[i]);
    }
    const size_t n = nodes.size();
    std::set<std::string> rails;
    if (n >= 2) {
      for (const peer::PeerPort& port : infos[0]->ports) {
        bool everywhere = true;
        const std::string& rail = coordinator::RailOf(port);
        for (const peer::PeerInfo* info : infos) {
          everywhere &= coordinator::PortInRail(*info, rail) != nullptr;
        }
        if (everywhere) rails.insert(rail);
      }
      if (rails.empty()) result.problems.push_back("no rail that every node has a port in");
    } else {
      stage->notes.push_back(absl::StrCat(n, " of ", asked.size(),
                                          " nodes answered: a ring needs 2; nothing was measured"));
    }
    rail_list.assign(rails.begin(), rails.end());
    const std::vector<std::vector<size_t>> phases =
        rails.empty() ? std::vector<std::vector<size_t>>{} : Phases(n);
    const absl::Time deadline = Now() + absl::Milliseconds(request.duration_ms) +
                                kRdmaStartTimeout + kRdmaSlack + absl::Seconds(5);
    int done = 0;
    for (const std::vector<size_t>& phase : phases) {
      if (stop.abandoned()) return coordinator::Stopped();
      std::vector<RdmaLink> links(phase.size() * rail_list.size());
      ParallelFor(links.size(), [&](size_t k) {
        const size_t r = k / phase.size(), i = phase[k % phase.size()], j = (i + 1) % n;
        const std::string& rail = rail_list[r];
        peer::PeerRequest run;
        peer::RdmaRun* rdma_run = &run.kind.emplace<peer::RdmaRun>();
        rdma_run->address =
            coordinator::AddressOf(coordinator::PortInRail(*infos[j], rail)->address);
        rdma_run->data_port = nodes[j].port;
        rdma_run->test = request.test;
        rdma_run->message_bytes = request.message_bytes;
        rdma_run->duration_ms = request.duration_ms;
        rdma_run->iterations = request.iterations;
        rdma_run->tool_port = static_cast<uint32_t>(kRdmaToolPort + r);
        rdma_run->rail = rail;
        absl::StatusOr<peer::PeerReply> reply = parts_.peers->Call(nodes[i], run, deadline, &stop);
        RdmaLink& link = links[k];
        if (reply.ok()) {
          link = reply->rdma_link;
        } else {
          link.error = std::string(reply.status().message());
        }
        link.rail = rail;
        link.from_node = infos[i]->node;
        link.from_port = coordinator::PortInRail(*infos[i], rail)->name;
        link.to_node = infos[j]->node;
        link.to_port = coordinator::PortInRail(*infos[j], rail)->name;
      });
      if (stop.abandoned()) return coordinator::Stopped();
      for (RdmaLink& link : links) result.links.push_back(std::move(link));
      ++done;
      progress(absl::StrCat("phase ", done, " of ", phases.size(), " done"),
               static_cast<double>(done) / phases.size());
    }
    std::sort(result.links.begin(), result.links.end(),
              [](const RdmaLink& a, const RdmaLink& b) { return a.rail < b.rail; });
  }
  if (stop.abandoned()) return coordinator::Stopped();
  Judge(request.min_fraction.value_or(kDefaultRdmaMinFraction), &result);
  result.ok = result.problems.empty();
  std::vector<std::string> measured_nodes;
  for (const auto& node : verdict.nodes) {
    if (!verdict.unmeasured.contains(node.first)) measured_nodes.push_back(node.first);
  }
  RdmaFindings findings = JudgeRdmaLinks(measured_nodes, rail_list, result.links);
  for (UnmeasuredNode& node : findings.unmeasured) {
    verdict.unmeasured.insert(node.node);
    result.not_measured.push_back(std::move(node));
  }
  result.suspect_details = std::move(findings.suspects);
  for (const Suspect& s : result.suspect_details) verdict.failed.insert(s.node);
  if (result.not_measured.size() == result.nodes.size() && result.ok) {
    stage->notes.push_back("no link was measured: every link was skipped");
  }
  verdict.passed = result.ok;
  verdict.detail = coordinator::FirstProblem(result.problems);
  verdict.max_failed = MaxUnvalidated(request.max_unvalidated_nodes,
                                      request.max_unvalidated_fraction, verdict.nodes.size());
  result.labels = Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
