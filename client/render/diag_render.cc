// SPDX-License-Identifier: Apache-2.0
#include "client/render/diag_render.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/render/diag_render_parts.h"
#include "client/render/table.h"

namespace rocenet::rocectl {

using diag_render::AppendCounters;
using diag_render::AppendLabels;
using diag_render::AppendNotes;
using diag_render::AppendProblems;
using diag_render::Endpoint;
using diag_render::StageLine;

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
  AppendCounters(result.counters(), &out);
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
  AppendCounters(result.counters(), &out);
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
  AppendCounters(result.counters(), &out);
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
  AppendCounters(result.counters(), &out);
  AppendProblems(result.problems(), &out);
  absl::StrAppend(&out, result.ok() ? "\nok\n" : "\nFAILED\n");
  return out;
}

}  // namespace rocenet::rocectl
