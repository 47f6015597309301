// SPDX-License-Identifier: Apache-2.0
#include "client/collective/hccl_log.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rocenet::rocectl::collective {
namespace {

constexpr char kBenchmark[] = "[BENCHMARK]";

double Number(const std::string& text) {
  double value = 0;
  return absl::SimpleAtod(text, &value) ? value : 0;
}

// "key=value, key=value" inside the headline's parentheses.
std::map<std::string, std::string> Arguments(absl::string_view inside) {
  std::map<std::string, std::string> args;
  for (absl::string_view part : absl::StrSplit(inside, ',')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, '=');
    args[std::string(absl::StripAsciiWhitespace(kv.first))] =
        std::string(absl::StripAsciiWhitespace(kv.second));
  }
  return args;
}

uint64_t TypeSize(const std::string& dtype) {
  return absl::StrContains(absl::AsciiStrToLower(dtype), "16") ? 2 : 4;
}

// The text after "[BENCHMARK]" (prefixes dropped), or nullopt.
std::optional<std::string> AfterTag(const std::string& line) {
  const size_t at = line.find(kBenchmark);
  if (at == std::string::npos) return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(line.substr(at + sizeof(kBenchmark) - 1)));
}

// "NW Bandwidth   : 205.899352 GB/s" -> 205.899352 for `label`.
std::optional<double> Labelled(const std::string& body, absl::string_view label) {
  if (!absl::StartsWith(body, label)) return std::nullopt;
  static const std::regex kValue(R"(:\s*([0-9.]+)\s*GB/s)");
  std::smatch m;
  if (!std::regex_search(body, m, kValue)) return std::nullopt;
  return Number(m[1]);
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : lines_(absl::StrSplit(text, '\n')) {
    for (std::string& line : lines_) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
    }
  }

  HcclDemoLog Run() {
    for (i_ = 0; i_ < lines_.size(); ++i_) {
      const std::string& line = lines_[i_];
      if (absl::StrContains(line, "SUMMARY REPORT]")) {
        Table();
      } else if (std::optional<std::string> body = AfterTag(line);
                 body.has_value() && absl::StartsWith(*body, "hccl")) {
        Block(*body);
      } else {
        PerRank(line);
      }
    }
    return std::move(log_);
  }

  bool SawAnything() const { return recognised_; }

 private:
  TestResult& Test(const std::string& name, int iterations) {
    for (TestResult& t : log_.tests) {
      if (t.test == name) return t;
    }
    log_.tests.push_back(TestResult{name, iterations, {}});
    return log_.tests.back();
  }

  // "[BENCHMARK] hcclAllReduce(dataSize=33554432, count=..., dtype=float,
  // iterations=1000)" (wrapped over lines in some renderings), then its
  // bandwidth lines.
  void Block(std::string headline) {
    while (!absl::StrContains(headline, ")") && i_ + 1 < lines_.size()) {
      headline += " " + std::string(absl::StripAsciiWhitespace(lines_[++i_]));
    }
    const size_t open = headline.find('(');
    const size_t close = headline.find(')');
    if (open == std::string::npos || close == std::string::npos) return;
    std::map<std::string, std::string> args =
        Arguments(headline.substr(open + 1, close - open - 1));
    uint64_t bytes = 0;
    for (const char* key : {"dataSize", "data_size", "InputSizeInBytes"}) {
      if (args.contains(key) && !absl::SimpleAtoi(args[key], &bytes)) bytes = 0;
    }
    if (bytes == 0 && args.contains("count")) {
      uint64_t count = 0;
      if (absl::SimpleAtoi(args["count"], &count)) bytes = count * TypeSize(args["dtype"]);
    }
    SizeResult size{bytes, 0, 0, 0};
    for (size_t j = i_ + 1; j < lines_.size() && j <= i_ + 6; ++j) {
      std::optional<std::string> body = AfterTag(lines_[j]);
      if (!body.has_value()) continue;
      if (auto v = Labelled(*body, "NW Bandwidth")) size.busbw_gbs = *v;
      if (auto v = Labelled(*body, "Algo Bandwidth")) size.algbw_gbs = *v;
    }
    if (size.algbw_gbs <= 0 || bytes == 0) return;  // a latency run, or cut short
    size.seconds = static_cast<double>(bytes) / (size.algbw_gbs * 1e9);
    int iterations = 0;
    if (!absl::SimpleAtoi(args["iterations"], &iterations)) iterations = 0;
    Test(TestNameOf(headline.substr(0, open)), iterations).sizes.push_back(size);
    recognised_ = true;
  }

  // The size-range table.
  void Table() {
    static const std::regex kTitle(R"(collective=([A-Za-z0-9_]+)(?:,\s*iterations=(\d+))?)");
    std::string name;
    int iterations = 0;
    size_t j = i_ + 1;
    for (; j < lines_.size() && j <= i_ + 3; ++j) {
      std::smatch m;
      if (std::regex_search(lines_[j], m, kTitle)) {
        name = m[1].str();
        if (m[2].matched && !absl::SimpleAtoi(m[2].str(), &iterations)) iterations = 0;
        break;
      }
    }
    if (name.empty()) return;
    // The header: find the columns by name.
    std::vector<std::string> header;
    for (++j; j < lines_.size(); ++j) {
      header = absl::StrSplit(Strip(lines_[j]), ' ', absl::SkipEmpty());
      if (!header.empty() && header[0] == "size") break;
    }
    if (j >= lines_.size()) return;
    auto column = [&](std::initializer_list<const char*> names) -> int {
      for (size_t c = 0; c < header.size(); ++c) {
        for (const char* n : names) {
          if (header[c] == n) return static_cast<int>(c);
        }
      }
      return -1;
    };
    const int time_col = column({"time"});
    const int alg_col = column({"algo_bw", "algoBW", "algbw"});
    const int bus_col = column({"nw_bw", "busbw"});
    if (alg_col < 0 || bus_col < 0) return;
    double time_unit = 1e-3;
    if (j + 1 < lines_.size() && absl::StrContains(lines_[j + 1], "(us)")) time_unit = 1e-6;
    TestResult& test = Test(name, iterations);
    for (j += 1; j < lines_.size(); ++j) {
      std::vector<std::string> cells;
      for (absl::string_view cell : absl::StrSplit(Strip(lines_[j]), ' ', absl::SkipEmpty())) {
        if (cell == "ms" || cell == "us" || cell == "GB/s") continue;  // units after values
        cells.emplace_back(cell);
      }
      if (cells.empty() || cells[0] == "(B)") continue;
      uint64_t bytes = 0;
      if (!absl::SimpleAtoi(cells[0], &bytes)) break;
      if (static_cast<int>(cells.size()) <= std::max({time_col, alg_col, bus_col})) break;
      SizeResult size{bytes, 0, Number(cells[alg_col]), Number(cells[bus_col])};
      size.seconds = time_col >= 0 ? Number(cells[time_col]) * time_unit : 0;
      if (size.seconds <= 0 && size.algbw_gbs > 0) {
        size.seconds = static_cast<double>(bytes) / (size.algbw_gbs * 1e9);
      }
      test.sizes.push_back(size);
      recognised_ = true;
    }
    i_ = j - 1;
  }

  void PerRank(const std::string& line) {
    static const std::regex kCheck(
        R"((?:^|[^a-z_])(?:hccl_)?rank=(\d+) size=\d+ .*which is (fine|bad)\.)");
    static const std::regex kPair(
        R"((\d+)-->(\d+): Test failed.*\(([0-9.]+) GB/s - ([0-9.]+)% of expected BW\))");
    static const std::regex kMarker(
        R"(rocenet-collective: node_id=(\d+) host=(\S*)(?: node=(\S*))?)");
    static const std::regex kError(R"(HCCL demo error: (.*))");
    std::smatch m;
    if (std::regex_search(line, m, kCheck)) {
      recognised_ = true;
      if (m[2] == "bad") {
        const int rank = static_cast<int>(Number(m[1]));
        if (std::find(log_.bad_ranks.begin(), log_.bad_ranks.end(), rank) == log_.bad_ranks.end()) {
          log_.bad_ranks.push_back(rank);
        }
      }
    } else if (std::regex_search(line, m, kPair)) {
      recognised_ = true;
      log_.slow_pairs.push_back({static_cast<int>(Number(m[1])), static_cast<int>(Number(m[2])),
                                 Number(m[3]), Number(m[4])});
    } else if (std::regex_search(line, m, kMarker)) {
      log_.nodes[static_cast<int>(Number(m[1]))] = {m[2].str(), m[3].matched ? m[3].str() : ""};
    } else if (std::regex_search(line, m, kError)) {
      recognised_ = true;
      log_.errors.push_back(std::string(absl::StripAsciiWhitespace(std::string(m[1]))));
    }
  }

  // A table line without the prefix kubectl or mpirun put before it.
  static std::string Strip(const std::string& line) {
    std::string text = line;
    static const std::regex kPrefix(R"(^\s*(\[[^\]]*\](<stdout>:)?\s*)+)");
    text = std::regex_replace(text, kPrefix, "");
    return text;
  }

  std::vector<std::string> lines_;
  size_t i_ = 0;
  HcclDemoLog log_;
  bool recognised_ = false;
};

}  // namespace

std::string TestNameOf(absl::string_view function) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(function);
  absl::ConsumePrefix(&trimmed, "hccl");
  const std::string name(trimmed);
  static const std::map<std::string, std::string> kNames = {{"AllReduce", "all_reduce"},
                                                            {"AlltoAll", "all2all"},
                                                            {"AllToAll", "all2all"},
                                                            {"AllGather", "all_gather"},
                                                            {"ReduceScatter", "reduce_scatter"},
                                                            {"Broadcast", "broadcast"},
                                                            {"Reduce", "reduce"},
                                                            {"SendRecv", "send_recv"}};
  auto it = kNames.find(name);
  return it != kNames.end() ? it->second : absl::AsciiStrToLower(name);
}

absl::StatusOr<HcclDemoLog> ParseHcclDemoLog(absl::string_view text) {
  Parser parser(text);
  HcclDemoLog log = parser.Run();
  if (!parser.SawAnything()) {
    return absl::InvalidArgumentError(
        "no hccl_demo results in the input: expected its \"[BENCHMARK] hccl...\" block "
        "(NW Bandwidth, Algo Bandwidth), a \"[BANDWIDTH SUMMARY REPORT]\" table, per-rank "
        "\"rank=N ... which is fine.\" lines or \"HCCL demo error:\" lines, as `kubectl logs` "
        "of the job shows them");
  }
  return log;
}

}  // namespace rocenet::rocectl::collective
