// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/rdma_bench.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rocenet::diag {
namespace {

constexpr int kMaxPerftestGidIndex = 64;  // MAX_GID_IX of perftest 4.5
constexpr int kMaxGidIndex = 255;
constexpr double kHblAssumedLineRate = 200e9;  // a Gaudi 3 scale-out port
constexpr uint64_t kMinHblIterations = 100;
constexpr uint64_t kMaxHblIterations = 10000000;
constexpr size_t kMaxQuotedLines = 4;

bool ValidDeviceName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("RDMA benchmark ", field, ": ", why));
}

absl::Status Validate(const RdmaBenchSpec& spec) {
  if (!ValidDeviceName(spec.device)) {
    return Invalid("device", absl::StrCat("\"", absl::CEscape(spec.device),
                                          "\" is not 1 to 64 of [A-Za-z0-9_.-]"));
  }
  if (spec.ib_port < 1 || spec.ib_port > 255) {
    return Invalid("ib_port", absl::StrCat(spec.ib_port, " is outside 1..255"));
  }
  int max_gid = spec.tool == RdmaTool::kPerftest ? kMaxPerftestGidIndex : kMaxGidIndex;
  if (spec.gid_index < 0 || spec.gid_index > max_gid) {
    return Invalid("gid_index", absl::StrCat(spec.gid_index, " is outside 0..", max_gid,
                                             " (the RoCE v2 GID index of the port's address)"));
  }
  if (spec.tcp_port == 0) return Invalid("tcp_port", "0 is not a port");
  if (spec.message_bytes < 1 || spec.message_bytes > kMaxRdmaMessageBytes) {
    return Invalid("message_bytes",
                   absl::StrCat(spec.message_bytes, " is outside 1..", kMaxRdmaMessageBytes));
  }
  if (spec.duration_seconds < 1 || spec.duration_seconds > kMaxRdmaDurationSeconds) {
    return Invalid("duration_seconds",
                   absl::StrCat(spec.duration_seconds, " is outside 1..", kMaxRdmaDurationSeconds));
  }
  if (spec.iterations > kMaxRdmaLatencyIterations) {
    return Invalid("iterations",
                   absl::StrCat(spec.iterations, " is above ", kMaxRdmaLatencyIterations));
  }
  if (spec.queue_pairs < 1 || spec.queue_pairs > kMaxRdmaQueuePairs) {
    return Invalid("queue_pairs",
                   absl::StrCat(spec.queue_pairs, " is outside 1..", kMaxRdmaQueuePairs));
  }
  if (spec.queue_pairs != 1 &&
      (spec.test == RdmaTest::kWriteLatency || spec.tool == RdmaTool::kHblPerfTest)) {
    return Invalid("queue_pairs",
                   absl::StrCat(spec.queue_pairs, ": ", RdmaProgram(spec), " runs one queue pair"));
  }
  return absl::OkStatus();
}

uint64_t LatencyIterations(const RdmaBenchSpec& spec) {
  if (spec.iterations > 0) return spec.iterations;
  return std::min<uint64_t>(kRdmaLatencyIterationsPerSecond * spec.duration_seconds,
                            kMaxRdmaLatencyIterations);
}

// perf_test has no duration: the messages a 200 Gb/s port moves in it.
uint64_t HblBandwidthIterations(const RdmaBenchSpec& spec) {
  double n = std::ceil(kHblAssumedLineRate * spec.duration_seconds /
                       (8.0 * static_cast<double>(spec.message_bytes)));
  return std::clamp<uint64_t>(static_cast<uint64_t>(n), kMinHblIterations, kMaxHblIterations);
}

// The tool's text without terminal colour sequences (perf_test colours its
// "Out:" and "ERROR:" prefixes) and carriage returns, as trimmed lines.
std::vector<std::string> CleanLines(absl::string_view text) {
  std::string plain;
  plain.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !absl::ascii_isalpha(static_cast<unsigned char>(text[i]))) ++i;
      continue;
    }
    if (text[i] != '\r') plain.push_back(text[i]);
  }
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(plain, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.emplace_back(line);
  }
  return lines;
}

std::vector<double> Numbers(absl::string_view line) {
  std::vector<double> values;
  for (absl::string_view token : absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    double v;
    if (!absl::SimpleAtod(token, &v)) return {};
    values.push_back(v);
  }
  return values;
}

// The failure: the tool's own error lines quoted, with a code for the cause.
absl::Status Failure(absl::string_view program, absl::string_view missing,
                     const std::vector<std::string>& tool_lines) {
  std::vector<std::string> quoted(
      tool_lines.begin(), tool_lines.begin() + std::min(tool_lines.size(), kMaxQuotedLines));
  std::string all = absl::StrJoin(tool_lines, "\n");
  std::string message = absl::StrCat(program, ": ", missing);
  if (!quoted.empty()) absl::StrAppend(&message, "; it said: ", absl::StrJoin(quoted, " | "));
  for (absl::string_view no_device :
       {"Did not detect devices", "Unable to find the Infiniband", "Failed to find device"}) {
    if (absl::StrContains(all, no_device)) return absl::NotFoundError(message);
  }
  if (absl::StrContains(all, " not found") && absl::StrContains(all, "device")) {
    return absl::NotFoundError(message);  // perftest: "IB device mlx5_9 not found"
  }
  for (absl::string_view no_peer :
       {"Couldn't connect to", "Connection timed out", "Unable to init the socket connection"}) {
    if (absl::StrContains(all, no_peer)) return absl::UnavailableError(message);
  }
  return absl::UnknownError(message);
}

// What a failed run left to quote: stderr, else the end of stdout.
std::vector<std::string> ToolLines(const std::vector<std::string>& out,
                                   const std::vector<std::string>& err) {
  if (!err.empty()) return err;
  size_t from = out.size() > kMaxQuotedLines ? out.size() - kMaxQuotedLines : 0;
  return std::vector<std::string>(out.begin() + from, out.end());
}

absl::StatusOr<RdmaMeasure> ParsePerftest(RdmaTest test, absl::string_view program,
                                          const std::vector<std::string>& out,
                                          const std::vector<std::string>& err) {
  const bool bw = test == RdmaTest::kWriteBandwidth;
  const absl::string_view header_key = bw ? "BW average[" : "t_typical[usec]";
  for (size_t i = 0; i < out.size(); ++i) {
    if (!absl::StrContains(out[i], "#bytes") || !absl::StrContains(out[i], header_key)) continue;
    double unit = 1e9;  // --report_gbits: 10^9 bit per second
    if (bw && absl::StrContains(out[i], "BW average[MB/sec]")) unit = 8.0 * (1 << 20);  // MiB/s
    for (size_t j = i + 1; j < out.size(); ++j) {
      std::vector<double> v = Numbers(out[j]);
      if (v.empty()) continue;  // a warning between the header and the row
      if (v.size() < (bw ? 5u : 9u)) break;
      RdmaMeasure m;
      m.message_bytes = static_cast<uint64_t>(v[0]);
      m.iterations = static_cast<uint64_t>(v[1]);
      if (bw) {
        m.peak_bits_per_second = v[2] * unit;
        m.bits_per_second = v[3] * unit;
      } else {
        m.latency_min_us = v[2];
        m.latency_max_us = v[3];
        m.latency_p50_us = v[4];
        m.latency_avg_us = v[5];
        m.latency_p99_us = v[7];
        m.latency_p999_us = v[8];
      }
      return m;
    }
    return Failure(program, "the result header has no result row under it", ToolLines(out, err));
  }
  return Failure(program, "no result", ToolLines(out, err));
}

// "Out: Test RX Bandwidth: 93.41 [Gbps]" -> 93.41 for key "Test RX Bandwidth:".
bool HblValue(const std::vector<std::string>& out, absl::string_view key, double& value) {
  for (const std::string& line : out) {
    size_t at = absl::string_view(line).find(key);
    if (at == absl::string_view::npos) continue;
    absl::string_view rest =
        absl::StripLeadingAsciiWhitespace(absl::string_view(line).substr(at + key.size()));
    std::string number(rest.substr(0, rest.find_first_of(" \t,[")));
    if (absl::SimpleAtod(number, &value)) return true;
  }
  return false;
}

absl::StatusOr<RdmaMeasure> ParseHbl(RdmaTest test, const std::vector<std::string>& out,
                                     const std::vector<std::string>& err) {
  std::vector<std::string> errors;
  for (const std::string& line : out) {
    if (absl::StartsWith(line, "ERROR:")) {
      errors.push_back(std::string(absl::StripAsciiWhitespace(absl::StripPrefix(line, "ERROR:"))));
    }
  }
  errors.insert(errors.end(), err.begin(), err.end());
  RdmaMeasure m;
  double v = 0;
  if (test == RdmaTest::kWriteBandwidth) {
    if (!HblValue(out, "Test RX Bandwidth:", v)) {
      return Failure("perf_test", "no \"Test RX Bandwidth\" line",
                     errors.empty() ? ToolLines(out, err) : errors);
    }
    m.bits_per_second = v * 1e9;  // GBPS is 10^9 in perf_test.c
    if (HblValue(out, "Packets  Received:", v)) m.iterations = static_cast<uint64_t>(v);
    if (HblValue(out, "size =", v)) m.message_bytes = static_cast<uint64_t>(v);
    return m;
  }
  if (!HblValue(out, "Average Latency:", v)) {
    return Failure("perf_test", "no \"Average Latency\" line",
                   errors.empty() ? ToolLines(out, err) : errors);
  }
  m.latency_avg_us = v;
  if (HblValue(out, "Min     Latency:", v)) m.latency_min_us = v;
  if (HblValue(out, "Max     Latency:", v)) m.latency_max_us = v;
  return m;
}

}  // namespace

std::string RdmaProgram(const RdmaBenchSpec& spec) {
  if (spec.tool == RdmaTool::kHblPerfTest) return "perf_test";
  return spec.test == RdmaTest::kWriteBandwidth ? "ib_write_bw" : "ib_write_lat";
}

absl::StatusOr<std::vector<std::string>> RdmaBenchArgv(const std::string& path,
                                                       const RdmaBenchSpec& spec) {
  if (absl::Status s = Validate(spec); !s.ok()) return s;
  const bool bw = spec.test == RdmaTest::kWriteBandwidth;
  std::vector<std::string> argv = {path};
  auto add = [&argv](absl::string_view flag, auto value) {
    argv.push_back(std::string(flag));
    argv.push_back(absl::StrCat(value));
  };
  if (spec.tool == RdmaTool::kHblPerfTest) {
    add("-t", bw ? "bw" : "lt");
    add("-d", spec.device);
    add("-i", spec.ib_port);
    add("-g", spec.gid_index);
    add("-p", spec.tcp_port);
    add("-s", spec.message_bytes);
    add("-n", bw ? HblBandwidthIterations(spec) : LatencyIterations(spec));
  } else {
    add("-d", spec.device);
    add("-i", spec.ib_port);
    add("-x", spec.gid_index);
    add("-p", spec.tcp_port);
    add("-s", spec.message_bytes);
    if (bw) {
      add("-D", spec.duration_seconds);
      add("-q", spec.queue_pairs);
      argv.push_back("--report_gbits");
    } else {
      add("-n", LatencyIterations(spec));
    }
    argv.push_back("-F");
    if (spec.bind) add("--source_ip", spec.bind->ToString());
  }
  if (spec.server) argv.push_back(spec.server->ToString());
  return argv;
}

absl::string_view RdmaServerReadyText(RdmaTool tool) {
  // perftest: "* Waiting for client to connect... *"; perf_test.c:
  // print("Server started on port = %d"), after bind and before listen.
  return tool == RdmaTool::kPerftest ? "Waiting for client to connect" : "Server started on port";
}

absl::StatusOr<RdmaMeasure> ParseRdmaBenchOutput(RdmaTool tool, RdmaTest test,
                                                 absl::string_view out, absl::string_view err) {
  std::vector<std::string> out_lines = CleanLines(out);
  std::vector<std::string> err_lines = CleanLines(err);
  if (tool == RdmaTool::kHblPerfTest) return ParseHbl(test, out_lines, err_lines);
  RdmaBenchSpec spec;
  spec.test = test;
  return ParsePerftest(test, RdmaProgram(spec), out_lines, err_lines);
}

}  // namespace rocenet::diag
