// SPDX-License-Identifier: Apache-2.0
// The RDMA benchmark of the triage stage: the command line of each end of a
// port pair, the line that tells a server is listening, and the measurement
// read back from what the tool printed. Pure functions, no I/O; the caller
// runs the argv through os::ProcessRunner. Thread-safe.
//
// Two tools:
//  - kPerftest: linux-rdma perftest (Debian package perftest, 4.5-0.17 in
//    Debian 12), ib_write_bw / ib_write_lat, on verbs NICs. Both ends get
//    the same options (perftest requires it) and the client the server's
//    address. Bandwidth runs for a duration (-D) and reports Gb/s
//    (--report_gbits, 10^9 bit); latency runs a number of iterations (-n),
//    because with -D ib_write_lat prints only an average and no percentiles.
//    -F keeps a CPU that is not at its maximum frequency from failing the run.
//    Both ends print the result of a bandwidth run (the server gets the
//    client's), both print their own latency.
//  - kHblPerfTest: Habana's perf_test (github.com/HabanaAI/perftest, shipped
//    as habanalabs-perf-test) for hbl (Gaudi) RDMA devices, which the verbs
//    perftest does not drive. Its flags come from its README; its output has
//    no documented format, so it is read from the print statements of
//    perf_test.c (v1.1.0.0): "Test RX Bandwidth: %.2f [Gbps]" (each end
//    sends and receives, and reports what it received), "Average / Min /
//    Max Latency: %.2f [us]" (half the round trip; no percentiles, no
//    iteration count), errors as "ERROR: ..." lines on stdout. It runs a
//    number of iterations only: the duration is turned into the iterations a
//    200 Gb/s port moves in that time. It cannot bind its socket (`bind` is
//    ignored) and runs one QP.
//
// Errors: RdmaBenchArgv is InvalidArgument naming the field. The parser is
// NotFound when the tool says the RDMA device is missing, Unavailable when
// it could not reach its peer, Unknown for any other failure; each message
// names the program and quotes the tool's own error lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/common/ipv4.h"

namespace rocenet::diag {

enum class RdmaTool { kPerftest, kHblPerfTest };
enum class RdmaTest { kWriteBandwidth, kWriteLatency };

inline constexpr uint64_t kMaxRdmaMessageBytes = 8 << 20;  // perftest's largest size (-a)
inline constexpr int kMaxRdmaDurationSeconds = 600;
inline constexpr int kMaxRdmaQueuePairs = 64;
// Latency runs: iterations per second of the requested duration (an
// exchange every 20 us), and at most this many (perftest keeps every sample).
inline constexpr uint64_t kRdmaLatencyIterationsPerSecond = 50000;
inline constexpr uint64_t kMaxRdmaLatencyIterations = 1000000;

struct RdmaBenchSpec {
  RdmaTool tool = RdmaTool::kPerftest;
  RdmaTest test = RdmaTest::kWriteBandwidth;
  std::string device;     // RDMA device, e.g. "mlx5_0" or "hbl_0"
  int ib_port = 1;        // 1-based
  int gid_index = -1;     // RoCE v2 GID index of the port's address (required >= 0)
  uint16_t tcp_port = 0;  // the tool's out-of-band TCP port (perftest -p)
  std::optional<Ipv4Address>
      server;  // client side: the server's address; nullopt: this is the server
  std::optional<Ipv4Address> bind;  // local address for the out-of-band socket (perftest only)
  uint64_t message_bytes = 65536;
  int duration_seconds = 2;  // bandwidth: -D; latency: iterations derived
  // Latency: round trips, 1..kMaxRdmaLatencyIterations; 0: derived from
  // duration_seconds.
  uint64_t iterations = 0;
  int queue_pairs = 1;  // bandwidth with perftest only
};

// The program's bare name: "ib_write_bw", "ib_write_lat" or "perf_test".
std::string RdmaProgram(const RdmaBenchSpec& spec);

// The full argv, argv[0] = `path`. InvalidArgument naming the field for a
// device name that is not [A-Za-z0-9_.-]{1,64}, an ib_port outside 1..255,
// a gid_index < 0 (or > 64, perftest's limit), a tcp_port 0, a message
// size outside 1..kMaxRdmaMessageBytes, a duration outside
// 1..kMaxRdmaDurationSeconds, iterations above kMaxRdmaLatencyIterations,
// or queue_pairs outside 1..kMaxRdmaQueuePairs (exactly 1 for latency and
// for perf_test).
absl::StatusOr<std::vector<std::string>> RdmaBenchArgv(const std::string& path,
                                                       const RdmaBenchSpec& spec);

// What the server prints once it is about to accept the client, for
// Process::WaitForOutput. perftest prints it just before it binds and
// listens (its client does not retry), so a client should retry a refused
// connection briefly; perf_test's client retries for 10 s by itself.
absl::string_view RdmaServerReadyText(RdmaTool tool);

struct RdmaMeasure {
  uint64_t message_bytes = 0;       // 0 when the tool does not print it
  uint64_t iterations = 0;          // likewise
  double bits_per_second = 0;       // bandwidth tests: the average
  double peak_bits_per_second = 0;  // perftest only (0.00 in duration mode)
  // Latency tests, one way (half the round trip), in microseconds; 0 for a
  // figure the tool does not report (perf_test: only min, avg and max).
  double latency_min_us = 0, latency_p50_us = 0 /* perftest's t_typical */, latency_avg_us = 0,
         latency_p99_us = 0, latency_p999_us = 0, latency_max_us = 0;
};

// Reads the result from the tool's stdout (and stderr, where perftest puts
// its errors). An error says what was missing and quotes the tool's own
// error lines ("Did not detect devices", "Couldn't connect to ...").
absl::StatusOr<RdmaMeasure> ParseRdmaBenchOutput(RdmaTool tool, RdmaTest test,
                                                 absl::string_view out, absl::string_view err = {});

}  // namespace rocenet::diag
