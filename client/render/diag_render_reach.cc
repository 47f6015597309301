// SPDX-License-Identifier: Apache-2.0
// RenderReach: a reach run's table, planned (a line per rail, the ports
// that lost echoes, the suspects) or every target with the matrix.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/render/diag_render.h"
#include "client/render/diag_render_parts.h"
#include "client/render/table.h"

namespace rocenet::rocectl {

using diag_render::AppendCounters;
using diag_render::AppendLabels;
using diag_render::AppendProblems;
using diag_render::Endpoint;

namespace {

std::string Percent(double ratio) { return absl::StrFormat("%.0f%%", ratio * 100); }

// Small echoes answered but no full-size one (the port's MTU, Don't
// Fragment) did.
bool FullSizeFailed(const v1::ReachTarget& t) {
  return t.reachable() && t.full_size_sent() > 0 && t.full_size_received() == 0;
}

// The gateway's cell: "ok 45us", or why not.
std::string GatewayCell(const v1::PortReach& port) {
  for (const v1::ReachTarget& t : port.targets()) {
    if (t.kind() != "gateway") continue;
    if (FullSizeFailed(t)) {
      return absl::StrCat("ok ", FormatSeconds(t.rtt_p50_seconds()), ", full-size X");
    }
    if (t.reachable()) return absl::StrCat("ok ", FormatSeconds(t.rtt_p50_seconds()));
    return t.error().empty() ? "X" : absl::StrCat("X ", t.error());
  }
  return "-";
}

bool GatewayFailed(const v1::PortReach& port) {
  for (const v1::ReachTarget& t : port.targets()) {
    if (t.kind() == "gateway") return !t.reachable() || FullSizeFailed(t);
  }
  return !port.error().empty();
}

// The full-size echoes of a target: "1500 ok", "9000 X", "9000 2/3 lost";
// empty when none were sent.
std::string FullSizeCell(const v1::ReachTarget& t) {
  if (t.full_size_sent() == 0) return "";
  std::string out = absl::StrCat(t.full_size_bytes(), " ");
  if (t.full_size_received() == 0) return absl::StrCat(out, "X");
  if (t.full_size_received() >= t.full_size_sent()) return absl::StrCat(out, "ok");
  return absl::StrCat(out, t.full_size_sent() - t.full_size_received(), "/", t.full_size_sent(),
                      " lost");
}

// A planned run without the matrix: the plan, a line per rail, the ports
// that lost anything.
std::string RenderPlanned(const v1::ReachResult& result) {
  const v1::ReachPlan& plan = result.plan();
  std::string out =
      absl::StrCat("plan ", plan.kind(), ": ", plan.nodes(), " nodes, ", plan.ports(), " ports, ",
                   plan.peer_probes(), " peer probes and ", plan.gateway_probes(),
                   " gateway probes (at most ", plan.max_peers_per_port(), " peers a port)\n\n");
  struct RailFigures {
    int ports = 0;
    uint64_t probed = 0, failed = 0;
    double lost = 0;
    std::vector<double> p50, p99;
    int gateways_failed = 0;
  };
  std::map<std::string, RailFigures> rails;
  for (const v1::PortReach& port : result.ports()) {
    RailFigures& f = rails[port.rail()];
    ++f.ports;
    f.probed += port.peers_probed();
    f.failed += port.peers_failed();
    f.lost += port.peer_loss_ratio() * port.peers_probed();
    if (port.peer_rtt_p50_seconds() > 0) f.p50.push_back(port.peer_rtt_p50_seconds());
    if (port.peer_rtt_p99_seconds() > 0) f.p99.push_back(port.peer_rtt_p99_seconds());
    if (GatewayFailed(port)) ++f.gateways_failed;
  }
  TextTable rail_table({"RAIL", "PORTS", "LEAVES", "STRIDE", "PEER PROBES", "FAILED", "LOSS",
                        "RTT P50", "P99", "GATEWAYS FAILED"});
  for (const v1::RailPlan& rail : plan.rails()) {
    RailFigures& f = rails[rail.rail()];
    std::sort(f.p50.begin(), f.p50.end());
    const double p50 = f.p50.empty() ? 0 : f.p50[f.p50.size() / 2];
    const double p99 = f.p99.empty() ? 0 : *std::max_element(f.p99.begin(), f.p99.end());
    rail_table.AddRow({rail.rail(), absl::StrCat(rail.ports()), absl::StrCat(rail.leaves()),
                       rail.stride() == 0 ? "-" : absl::StrCat(rail.stride()),
                       absl::StrCat(rail.peer_probes()), absl::StrCat(f.failed),
                       Percent(f.probed == 0 ? 0 : f.lost / f.probed), FormatSeconds(p50),
                       FormatSeconds(p99), absl::StrCat(f.gateways_failed)});
  }
  absl::StrAppend(&out, rail_table.Render());

  TextTable ports(
      {"PORT", "LEAF", "PEERS", "FAILED", "FULL SIZE FAILED", "LOSS", "RTT P50", "P99", "GATEWAY"});
  int rows = 0;
  for (const v1::PortReach& port : result.ports()) {
    if (port.peers_failed() == 0 && port.peers_failed_full_size() == 0 &&
        port.peer_loss_ratio() == 0 && !GatewayFailed(port)) {
      continue;
    }
    ++rows;
    ports.AddRow({Endpoint(port.node(), port.port()), port.leaf().empty() ? "-" : port.leaf(),
                  absl::StrCat(port.peers_probed()), absl::StrCat(port.peers_failed()),
                  port.mtu() == 0
                      ? "-"
                      : absl::StrCat(port.peers_failed_full_size(), " (", port.mtu(), " B)"),
                  Percent(port.peer_loss_ratio()), FormatSeconds(port.peer_rtt_p50_seconds()),
                  FormatSeconds(port.peer_rtt_p99_seconds()), GatewayCell(port)});
  }
  if (rows > 0) absl::StrAppend(&out, "\nPorts that lost echoes:\n", ports.Render());
  return out;
}

constexpr int kUnreachableLines = 40;

std::string RenderTargets(const v1::ReachResult& result);
std::string RenderPlannedTail(const v1::ReachResult& result, std::string out);

}  // namespace

bool ReachIncomplete(const v1::ReachResult& result) {
  std::set<std::string> not_tested;
  for (const v1::NodeNotTested& node : result.not_tested()) not_tested.insert(node.node());
  return !result.ok() && !not_tested.empty() && result.suspect_details().empty() &&
         result.suspects().empty() &&
         std::all_of(
             result.unreachable().begin(), result.unreachable().end(),
             [&](const v1::UnreachablePair& p) { return not_tested.contains(p.to_node()); });
}

std::string RenderReach(const v1::ReachResult& result) {
  if (!result.plan().kind().empty() && !result.ports().empty()) {
    // Reduced results list no peer that answered every echo.
    bool every_target = false;
    for (const v1::PortReach& port : result.ports()) {
      for (const v1::ReachTarget& t : port.targets()) {
        every_target = every_target || (t.kind() == "peer" && t.reachable() && t.loss_ratio() == 0);
      }
    }
    if (!every_target) return RenderPlannedTail(result, RenderPlanned(result));
  }
  return RenderPlannedTail(result, RenderTargets(result));
}

namespace {

// Every target of every port, and with more than one node a matrix per
// rail.
std::string RenderTargets(const v1::ReachResult& result) {
  const bool mesh = result.nodes_size() > 1;
  TextTable table({"FROM", "TARGET", "KIND", "ADDRESS", "SENT", "LOSS", "RTT P50", "P90", "P99",
                   "FULL SIZE", "ARP", "STATUS"});
  for (const v1::PortReach& port : result.ports()) {
    if (port.targets().empty()) {
      table.AddRow({Endpoint(mesh ? port.node() : "", port.port()), "-", "-", "-", "-", "-", "-",
                    "-", "-", "-", "-", port.error().empty() ? "no targets" : port.error()});
    }
    for (const v1::ReachTarget& t : port.targets()) {
      const std::string target =
          t.kind() == "gateway" ? "gateway"
                                : (t.node().empty() ? t.address() : Endpoint(t.node(), t.port()));
      table.AddRow({Endpoint(mesh ? port.node() : "", port.port()), target, t.kind(), t.address(),
                    absl::StrCat(t.sent()), absl::StrFormat("%.0f%%", t.loss_ratio() * 100),
                    FormatSeconds(t.rtt_p50_seconds()), FormatSeconds(t.rtt_p90_seconds()),
                    FormatSeconds(t.rtt_p99_seconds()), FullSizeCell(t),
                    t.kind() == "gateway" ? (t.arp_resolved() ? t.arp_mac() : "no reply") : "",
                    !t.reachable()
                        ? absl::StrCat("UNREACHABLE", t.error().empty() ? "" : ": ", t.error())
                        : (FullSizeFailed(t) ? "FULL SIZE LOST" : "ok")});
    }
  }
  std::string out = table.Render();

  if (mesh) {
    // A matrix per rail: rows probe, columns are probed; "ok", "X", "." for self.
    std::map<std::string, std::vector<const v1::PortReach*>> rails;
    for (const v1::PortReach& port : result.ports()) rails[port.rail()].push_back(&port);
    for (const auto& [rail, ports] : rails) {
      absl::StrAppend(&out, "\nRail ", rail,
                      " (row: from, column: to; X unreachable, M only full-size echoes lost):\n");
      std::vector<std::string> headers = {""};
      for (const v1::PortReach* to : ports) headers.push_back(Endpoint(to->node(), to->port()));
      headers.push_back("gateway");
      TextTable matrix(headers);
      for (const v1::PortReach* from : ports) {
        std::vector<std::string> row = {Endpoint(from->node(), from->port())};
        for (const v1::PortReach* to : ports) {
          if (to == from) {
            row.push_back(".");
            continue;
          }
          std::string cell = "?";
          const std::string address = to->address().substr(0, to->address().find('/'));
          for (const v1::ReachTarget& t : from->targets()) {
            if (t.address() == address)
              cell = !t.reachable() ? "X" : (FullSizeFailed(t) ? "M" : "ok");
          }
          row.push_back(cell);
        }
        std::string gateway = "?";
        for (const v1::ReachTarget& t : from->targets()) {
          if (t.kind() == "gateway")
            gateway = !t.reachable() ? "X" : (FullSizeFailed(t) ? "M" : "ok");
        }
        row.push_back(gateway);
        matrix.AddRow(row);
      }
      absl::StrAppend(&out, matrix.Render());
    }
  }

  return out;
}

// The unreachable pairs, the suspects and what became of the labels.
std::string RenderPlannedTail(const v1::ReachResult& result, std::string out) {
  if (!result.unreachable().empty()) {
    absl::StrAppend(&out, "\nUnreachable:\n");
    int lines = 0;
    for (const v1::UnreachablePair& p : result.unreachable()) {
      if (++lines > kUnreachableLines) {
        absl::StrAppend(&out, "  ... and ", result.unreachable_size() - kUnreachableLines,
                        " more (-o json lists every one)\n");
        break;
      }
      const std::string to =
          p.to_node() == "gateway"
              ? absl::StrCat("its gateway ", p.to_address())
              : absl::StrCat(Endpoint(p.to_node(), p.to_port()), " (", p.to_address(), ")");
      absl::StrAppend(&out, "  ", Endpoint(p.from_node(), p.from_port()), " -> ", to, ": ",
                      p.reason(), "\n");
    }
  }
  if (!result.suspect_details().empty()) {
    absl::StrAppend(&out, "\nSuspects:\n");
    TextTable suspects({"SUSPECT", "KIND", "RAIL", "EVIDENCE"});
    for (int i = 0; i < result.suspect_details_size(); ++i) {
      const v1::Suspect& s = result.suspect_details(i);
      suspects.AddRow({i < result.suspects_size() ? result.suspects(i) : s.node(), s.kind(),
                       s.rail().empty() ? "-" : s.rail(), s.evidence()});
    }
    absl::StrAppend(&out, suspects.Render());
  } else if (!result.suspects().empty()) {
    absl::StrAppend(&out, "\nSuspects (every probe from and to them failed): ",
                    absl::StrJoin(result.suspects(), ", "), "\n");
  }
  std::set<std::string> not_tested;
  if (!result.not_tested().empty()) {
    absl::StrAppend(&out,
                    "\nNot tested (their rocenet-diagd did not answer; no suspect, their labels "
                    "kept):\n");
    for (const v1::NodeNotTested& node : result.not_tested()) {
      absl::StrAppend(&out, "  ", node.node(), ": ", node.reason(), "\n");
      not_tested.insert(node.node());
    }
  }
  AppendCounters(result.counters(), &out);
  AppendProblems(result.problems(), &out);
  AppendLabels(result.labels(), "reach", &out);
  const bool incomplete = ReachIncomplete(result);
  if (result.ok()) {
    absl::StrAppend(&out, "\nall reachable\n");
  } else if (incomplete) {
    absl::StrAppend(&out, "\nINCOMPLETE: ", not_tested.size(),
                    not_tested.size() == 1 ? " node" : " nodes",
                    " not tested, the others all reachable\n");
  } else {
    absl::StrAppend(&out, "\nFAILED\n");
  }
  return out;
}

}  // namespace

}  // namespace rocenet::rocectl
