// SPDX-License-Identifier: Apache-2.0
// How fast lldp::Decode() handles the frames a real switch sends, measured
// against a peer in the same run: a bare walk over the TLV headers, which is
// the least any LLDP decoder has to do. The ratio decode/walk is what to watch;
// absolute numbers depend on the machine.
//
//   lldp_decode_bench [--benchmark_filter=...] [--benchmark_min_time=...]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"
#include "daemon/lldp/codec.h"
#include "tests/unit/testing/pcap_reader.h"

namespace rocenet::lldp {
namespace {

struct Sample {
  std::string label;  // capture file and frame index
  std::string frame;
};

// Every distinct frame of the LLDP captures, in file order.
std::vector<Sample> LoadSamples() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ROCENET_FIXTURE_DIR "/lldp")) {
    if (entry.path().extension() == ".pcap") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Sample> samples;
  for (const auto& path : files) {
    absl::StatusOr<std::vector<std::string>> frames = testutil::ReadEthernetFrames(path.string());
    if (!frames.ok()) {
      std::fprintf(stderr, "%s\n", frames.status().ToString().c_str());
      continue;
    }
    for (size_t i = 0; i < frames->size(); ++i) {
      const std::string& frame = (*frames)[i];
      const bool seen = std::any_of(samples.begin(), samples.end(),
                                    [&](const Sample& s) { return s.frame == frame; });
      if (!seen) samples.push_back({absl::StrCat(path.stem().string(), "#", i), frame});
    }
  }
  return samples;
}

// The peer: find the LLDPDU of an untagged frame and step over every TLV
// header with a bounds check, nothing else.
size_t WalkTlvHeaders(absl::string_view frame) {
  size_t count = 0;
  size_t pos = kEthernetHeaderSize;
  while (pos + 2 <= frame.size()) {
    const auto b0 = static_cast<uint8_t>(frame[pos]);
    const auto b1 = static_cast<uint8_t>(frame[pos + 1]);
    if ((b0 >> 1) == 0) break;
    pos += 2 + ((static_cast<size_t>(b0 & 1) << 8) | b1);
    ++count;
  }
  return count;
}

void BM_Decode(benchmark::State& state, const std::string& frame) {
  for (auto _ : state) {
    absl::StatusOr<Lldpdu> decoded = Decode(frame);
    benchmark::DoNotOptimize(decoded);
    if (!decoded.ok()) {
      state.SkipWithError("frame does not decode");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(frame.size()));
}

void BM_WalkTlvHeaders(benchmark::State& state, const std::string& frame) {
  for (auto _ : state) {
    size_t count = WalkTlvHeaders(frame);
    benchmark::DoNotOptimize(count);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(frame.size()));
}

// Prints the usual console report and remembers CPU time per iteration of
// each benchmark, so main() can print the ratios at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      ns_per_iteration_[run.benchmark_name()] =
          run.GetAdjustedCPUTime() * NanosecondsPer(run.time_unit);
    }
  }

  // CPU nanoseconds per iteration of `name`, or 0 if it did not run.
  double Nanoseconds(const std::string& name) const {
    auto it = ns_per_iteration_.find(name);
    return it == ns_per_iteration_.end() ? 0 : it->second;
  }

 private:
  static double NanosecondsPer(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kSecond:
        return 1e9;
      case benchmark::kMillisecond:
        return 1e6;
      case benchmark::kMicrosecond:
        return 1e3;
      default:
        return 1;
    }
  }

  std::map<std::string, double> ns_per_iteration_;
};

int Main(int argc, char** argv) {
  const std::vector<Sample> samples = LoadSamples();
  if (samples.empty()) {
    std::fprintf(stderr, "no LLDP fixture frames found under %s\n", ROCENET_FIXTURE_DIR);
    return 1;
  }
  for (const Sample& s : samples) {
    benchmark::RegisterBenchmark(absl::StrCat("Decode/", s.label).c_str(), BM_Decode, s.frame);
    benchmark::RegisterBenchmark(absl::StrCat("WalkTlvHeaders/", s.label).c_str(),
                                 BM_WalkTlvHeaders, s.frame);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::printf(
      "\nDecode vs. a bare TLV-header walk, same run (CPU time per frame; a frame that\n"
      "recurs in later captures is measured once, under its first capture):\n");
  std::printf("%-24s %6s %10s %10s %14s %8s\n", "frame", "bytes", "decode ns", "walk ns",
              "decode fr/s", "ratio");
  for (const Sample& s : samples) {
    const double decode = reporter.Nanoseconds("Decode/" + s.label);
    const double walk = reporter.Nanoseconds("WalkTlvHeaders/" + s.label);
    if (decode <= 0 || walk <= 0) continue;  // filtered out
    std::printf("%-24s %6zu %10.1f %10.1f %14.0f %7.1fx\n", s.label.c_str(), s.frame.size(), decode,
                walk, 1e9 / decode, decode / walk);
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace rocenet::lldp

int main(int argc, char** argv) { return rocenet::lldp::Main(argc, argv); }
