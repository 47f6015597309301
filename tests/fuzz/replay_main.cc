// SPDX-License-Identifier: Apache-2.0
// Runs the fuzz target without libFuzzer, so the regular build keeps it
// compiling and CTest keeps its checks passing:
//
//   lldp_decode_fuzz_replay                 every frame of the LLDP captures,
//                                           every prefix of each, and each
//                                           with every byte flipped in turn
//   lldp_decode_fuzz_replay FILE...         each file as one input, e.g. a
//                                           crash-* artifact from run.sh
//
// The target aborts on a violation; this returns 0 if it never did.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/unit/testing/pcap_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

int ReplayFiles(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot open %s\n", argv[i]);
      return 1;
    }
    Run(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  }
  std::printf("replayed %d inputs\n", argc - 1);
  return 0;
}

int ReplayFixtures() {
  size_t frames = 0, inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ROCENET_FIXTURE_DIR "/lldp")) {
    if (entry.path().extension() != ".pcap") continue;
    auto read = rocenet::testutil::ReadEthernetFrames(entry.path().string());
    if (!read.ok()) {
      std::fprintf(stderr, "%s\n", read.status().ToString().c_str());
      return 1;
    }
    for (const std::string& frame : *read) {
      ++frames;
      for (size_t n = 0; n <= frame.size(); ++n, ++inputs) Run(frame.substr(0, n));
      for (size_t i = 0; i < frame.size(); ++i, ++inputs) {
        std::string flipped = frame;
        flipped[i] = static_cast<char>(~flipped[i]);
        Run(flipped);
      }
    }
  }
  if (frames == 0) {
    std::fprintf(stderr, "no frames under %s\n", ROCENET_FIXTURE_DIR "/lldp");
    return 1;
  }
  std::printf("replayed %zu inputs derived from %zu captured frames\n", inputs, frames);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return argc > 1 ? ReplayFiles(argc, argv) : ReplayFixtures(); }
