// SPDX-License-Identifier: Apache-2.0
#include "client/render/diag_render.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/render/table.h"

namespace rocenet::rocectl {
namespace {

std::string Endpoint(const std::string& node, const std::string& port) {
  if (node.empty()) return port;
  return absl::StrCat(node, "/", port);
}

// What the figures are: "stage ethernet: TCP through the netdev so0 (...)".
std::string StageLine(const v1::StagePath& stage) {
  if (stage.stage().empty()) return "";
  return absl::StrCat("stage ", stage.stage(), ": ", stage.path(), "\n");
}

void AppendNotes(const v1::StagePath& stage, std::string* out) {
  if (stage.notes().empty()) return;
  absl::StrAppend(out, "\nNotes:\n");
  for (const std::string& note : stage.notes()) absl::StrAppend(out, "  ", note, "\n");
}

void AppendProblems(const google::protobuf::RepeatedPtrField<std::string>& problems,
                    std::string* out) {
  if (problems.empty()) return;
  absl::StrAppend(out, "\nProblems:\n");
  for (const std::string& p : problems) absl::StrAppend(out, "  ", p, "\n");
}

// What the run did to the validation labels of `stage`.
void AppendLabels(const v1::Labels& labels, absl::string_view stage, std::string* out) {
  if (labels.inconclusive()) {
    absl::StrAppend(out, "\nLabels: inconclusive, ", labels.reason(), "\n");
  } else if (!labels.unvalidated().empty()) {
    absl::StrAppend(out, "\nLabels: validation removed from ",
                    absl::StrJoin(labels.unvalidated(), ", "), "\n");
  } else if (labels.validated() > 0) {
    absl::StrAppend(out, "\nLabels: ", stage, " validated on ", labels.validated(), " node",
                    labels.validated() == 1 ? "" : "s", "\n");
  }
}

}  // namespace

std::string FormatSeconds(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return absl::StrFormat("%.0fus", seconds * 1e6);
  if (seconds < 1) return absl::StrFormat("%.2fms", seconds * 1e3);
  return absl::StrFormat("%.2fs", seconds);
}

std::string FormatBits(double bits_per_second) {
  if (bits_per_second >= 1e9) return absl::StrFormat("%.2f Gb/s", bits_per_second / 1e9);
  if (bits_per_second >= 1e6) return absl::StrFormat("%.1f Mb/s", bits_per_second / 1e6);
  return absl::StrFormat("%.0f b/s", bits_per_second);
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return absl::StrCat(bytes >> 20, "M");
  if (bytes >= 1024 && bytes % 1024 == 0) return absl::StrCat(bytes >> 10, "K");
  return absl::StrCat(bytes);
}

namespace {

std::string Percent(double ratio) { return absl::StrFormat("%.0f%%", ratio * 100); }

// The gateway's cell: "ok 45us", or why not.
std::string GatewayCell(const v1::PortReach& port) {
  for (const v1::ReachTarget& t : port.targets()) {
    if (t.kind() != "gateway") continue;
    if (t.reachable()) return absl::StrCat("ok ", FormatSeconds(t.rtt_p50_seconds()));
    return t.error().empty() ? "X" : absl::StrCat("X ", t.error());
  }
  return "-";
}

bool GatewayFailed(const v1::PortReach& port) {
  for (const v1::ReachTarget& t : port.targets()) {
    if (t.kind() == "gateway") return !t.reachable();
  }
  return !port.error().empty();
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

  TextTable ports({"PORT", "LEAF", "PEERS", "FAILED", "LOSS", "RTT P50", "P99", "GATEWAY"});
  int rows = 0;
  for (const v1::PortReach& port : result.ports()) {
    if (port.peers_failed() == 0 && port.peer_loss_ratio() == 0 && !GatewayFailed(port)) continue;
    ++rows;
    ports.AddRow({Endpoint(port.node(), port.port()), port.leaf().empty() ? "-" : port.leaf(),
                  absl::StrCat(port.peers_probed()), absl::StrCat(port.peers_failed()),
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
                   "ARP", "STATUS"});
  for (const v1::PortReach& port : result.ports()) {
    if (port.targets().empty()) {
      table.AddRow({Endpoint(mesh ? port.node() : "", port.port()), "-", "-", "-", "-", "-", "-",
                    "-", "-", "-", port.error().empty() ? "no targets" : port.error()});
    }
    for (const v1::ReachTarget& t : port.targets()) {
      const std::string target =
          t.kind() == "gateway" ? "gateway"
                                : (t.node().empty() ? t.address() : Endpoint(t.node(), t.port()));
      table.AddRow({Endpoint(mesh ? port.node() : "", port.port()), target, t.kind(), t.address(),
                    absl::StrCat(t.sent()), absl::StrFormat("%.0f%%", t.loss_ratio() * 100),
                    FormatSeconds(t.rtt_p50_seconds()), FormatSeconds(t.rtt_p90_seconds()),
                    FormatSeconds(t.rtt_p99_seconds()),
                    t.kind() == "gateway" ? (t.arp_resolved() ? t.arp_mac() : "no reply") : "",
                    t.reachable()
                        ? "ok"
                        : absl::StrCat("UNREACHABLE", t.error().empty() ? "" : ": ", t.error())});
    }
  }
  std::string out = table.Render();

  if (mesh) {
    // A matrix per rail: rows probe, columns are probed; "ok", "X", "." for self.
    std::map<std::string, std::vector<const v1::PortReach*>> rails;
    for (const v1::PortReach& port : result.ports()) rails[port.rail()].push_back(&port);
    for (const auto& [rail, ports] : rails) {
      absl::StrAppend(&out, "\nRail ", rail, " (row: from, column: to):\n");
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
            if (t.address() == address) cell = t.reachable() ? "ok" : "X";
          }
          row.push_back(cell);
        }
        std::string gateway = "?";
        for (const v1::ReachTarget& t : from->targets()) {
          if (t.kind() == "gateway") gateway = t.reachable() ? "ok" : "X";
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
  AppendProblems(result.problems(), &out);
  AppendLabels(result.labels(), "reach", &out);
  absl::StrAppend(&out, result.ok() ? "\nall reachable\n" : "\nFAILED\n");
  return out;
}

}  // namespace

std::string RenderBandwidth(const v1::BandwidthResult& result) {
  std::string out = absl::StrCat(
      StageLine(result.stage()), "port ", result.port(), " (", result.local_address(), ") <-> ",
      result.peer(), ", link ",
      result.link_bits_per_second() > 0 ? FormatBits(result.link_bits_per_second()) : "unknown",
      "\n\n");
  TextTable table({"DIRECTION", "STREAMS", "THROUGHPUT", "OF LINK", "BYTES", "RETRANSMITS"});
  for (const v1::DirectionResult& d : result.directions()) {
    table.AddRow(
        {d.direction(), absl::StrCat(d.streams_size()), FormatBits(d.bits_per_second()),
         d.fraction_of_link() > 0 ? absl::StrFormat("%.0f%%", d.fraction_of_link() * 100) : "-",
         absl::StrCat(d.bytes()),
         d.direction() == "transmit" ? absl::StrCat(d.retransmits()) : "-"});
  }
  out += table.Render();
  AppendNotes(result.stage(), &out);
  AppendProblems(result.problems(), &out);
  absl::StrAppend(&out, result.ok() ? "\nok\n" : "\nFAILED\n");
  return out;
}

std::string RenderAllreduce(const v1::AllreduceResult& result) {
  std::string out = absl::StrCat(StageLine(result.stage()), "ring all-reduce over ", result.ranks(),
                                 " nodes: ", absl::StrJoin(result.nodes(), " -> "), "\n");
  for (const v1::RailResult& rail : result.rails()) {
    absl::StrAppend(&out, "\nRail ", rail.rail(), rail.broken() ? ": BROKEN" : "", "\n");
    if (!rail.sizes().empty()) {
      TextTable sizes({"SIZE", "TIME", "ALGBW (GB/s)", "BUSBW (GB/s)", "CHECK"});
      for (const v1::AllreduceSize& s : rail.sizes()) {
        sizes.AddRow({FormatBytes(s.bytes()), FormatSeconds(s.seconds()),
                      absl::StrFormat("%.3f", s.algbw_bytes_per_second() / 1e9),
                      absl::StrFormat("%.3f", s.busbw_bytes_per_second() / 1e9),
                      s.verified() ? "ok" : "WRONG"});
      }
      out += sizes.Render();
      out += "\n";
    }
    TextTable links({"LINK", "THROUGHPUT", "NOTE"});
    for (const v1::RingLink& l : rail.links()) {
      links.AddRow(
          {absl::StrCat(Endpoint(l.from_node(), l.from_port()), " -> ",
                        Endpoint(l.to_node(), l.to_port())),
           l.error().empty() && l.bits_per_second() > 0 ? FormatBits(l.bits_per_second()) : "-",
           !l.error().empty() ? absl::StrCat("FAILED: ", l.error())
                              : (l.slowest() ? "slowest" : "")});
    }
    out += links.Render();
  }
  if (!result.bisection().empty()) {
    absl::StrAppend(&out, "\nBisection (busbw at the largest size, the lowest rail)\n");
    TextTable steps({"DEPTH", "NODES", "BUSBW (GB/s)", "SLOWEST LINK", "VERDICT"});
    for (const v1::BisectionStep& step : result.bisection()) {
      std::string nodes = absl::StrJoin(step.nodes(), ",");
      if (step.nodes_size() > 3) {
        nodes = absl::StrCat(step.nodes(0), "..", step.nodes(step.nodes_size() - 1), " (",
                             step.nodes_size(), ")");
      }
      steps.AddRow(
          {absl::StrCat(step.depth(), step.pair() ? " pair" : ""), nodes,
           step.broken() ? "BROKEN" : absl::StrFormat("%.3f", step.busbw_bytes_per_second() / 1e9),
           step.slowest_link().empty() ? "-" : step.slowest_link(),
           step.depth() == 0 ? "" : (step.slow() ? absl::StrCat("SLOW: ", step.reason()) : "ok")});
    }
    out += steps.Render();
    absl::StrAppend(&out, "\n", result.bisection_conclusion(), "\n");
  }
  AppendNotes(result.stage(), &out);
  AppendProblems(result.problems(), &out);
  AppendLabels(result.labels(), "ethernet", &out);
  absl::StrAppend(&out, result.ok() ? "\nok\n" : "\nFAILED\n");
  return out;
}

std::string RenderIncast(const v1::IncastResult& result) {
  std::string out =
      absl::StrCat(StageLine(result.stage()), result.senders_size(), " senders -> ", result.node(),
                   "/", result.port(), " (", result.address(), ")\n\n");
  TextTable table({"SENDER", "FROM", "THROUGHPUT", "BYTES", "RETRANSMITS", "ERROR"});
  for (const v1::IncastSender& s : result.senders()) {
    table.AddRow({s.node(), s.address().empty() ? "-" : Endpoint(s.port(), s.address()),
                  FormatBits(s.bits_per_second()), absl::StrCat(s.bytes()),
                  absl::StrCat(s.retransmits()), s.error()});
  }
  out += table.Render();
  absl::StrAppend(
      &out, "\ntotal ", FormatBits(result.total_bits_per_second()), ", fairness (Jain) ",
      absl::StrFormat("%.3f", result.fairness()), " (1/n = ",
      absl::StrFormat("%.3f", result.senders().empty() ? 0.0 : 1.0 / result.senders_size()),
      "), retransmits ", result.retransmits(), ", receive drops ", result.receive_drops(), "\n");
  AppendNotes(result.stage(), &out);
  AppendProblems(result.problems(), &out);
  absl::StrAppend(&out, result.ok() ? "\nok\n" : "\nFAILED\n");
  return out;
}

std::string RenderRdma(const v1::RdmaResult& result) {
  std::string out = absl::StrCat(StageLine(result.stage()), "RDMA links between ",
                                 absl::StrJoin(result.nodes(), ", "), "\n\n");
  bool latency = false;
  for (const v1::RdmaLink& l : result.links()) latency |= l.latency_p50_seconds() > 0;
  TextTable table({"RAIL", "LINK", "DEVICES (GID)", "TOOL", latency ? "P50" : "THROUGHPUT",
                   latency ? "P99" : "OF LINK", "NOTE"});
  for (const v1::RdmaLink& l : result.links()) {
    std::string note = !l.error().empty()     ? absl::StrCat("FAILED: ", l.error())
                       : !l.skipped().empty() ? absl::StrCat("skipped: ", l.skipped())
                       : l.below_expected()   ? "BELOW EXPECTED"
                       : l.slowest()          ? "slowest"
                                              : "";
    const bool measured = l.error().empty() && l.skipped().empty();
    table.AddRow(
        {l.rail(),
         absl::StrCat(Endpoint(l.from_node(), l.from_port()), " -> ",
                      Endpoint(l.to_node(), l.to_port())),
         l.from_device().empty() ? "-"
                                 : absl::StrCat(l.from_device(), " (", l.from_gid_index(), ") -> ",
                                                l.to_device().empty() ? "-" : l.to_device(), " (",
                                                l.to_gid_index(), ")"),
         l.tool().empty() ? "-" : l.tool(),
         !measured ? "-"
         : latency ? FormatSeconds(l.latency_p50_seconds())
                   : FormatBits(l.bits_per_second()),
         !measured ? "-"
         : latency
             ? FormatSeconds(l.latency_p99_seconds())
             : (l.fraction_of_link() > 0 ? absl::StrFormat("%.0f%%", l.fraction_of_link() * 100)
                                         : "-"),
         note});
  }
  out += table.Render();
  AppendNotes(result.stage(), &out);
  AppendProblems(result.problems(), &out);
  absl::StrAppend(&out, result.ok() ? "\nok\n" : "\nFAILED\n");
  return out;
}

}  // namespace rocenet::rocectl
