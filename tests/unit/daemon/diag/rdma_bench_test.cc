// SPDX-License-Identifier: Apache-2.0
// The RDMA benchmark's command lines, validation and output parsing, against
// the outputs in tests/fixtures/rdma/ (see the README there for which were
// recorded and which were put together from the tools' print statements).
#include "daemon/diag/rdma_bench.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::AllOf;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFixtureDir = ROCENET_FIXTURE_DIR "/rdma";

std::string Fixture(const std::string& name) {
  std::ifstream in(kFixtureDir + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RdmaBenchSpec Spec(RdmaTool tool, RdmaTest test) {
  RdmaBenchSpec spec;
  spec.tool = tool;
  spec.test = test;
  spec.device = tool == RdmaTool::kPerftest ? "mlx5_0" : "hbl_0";
  spec.gid_index = 3;
  spec.tcp_port = 18515;
  return spec;
}

std::vector<std::string> Argv(const RdmaBenchSpec& spec) {
  absl::StatusOr<std::vector<std::string>> argv = RdmaBenchArgv("/usr/bin/tool", spec);
  EXPECT_OK(argv);
  return argv.ok() ? *argv : std::vector<std::string>{};
}

TEST(RdmaBenchArgvTest, PerftestBandwidthServerAndClient) {
  RdmaBenchSpec spec = Spec(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth);
  EXPECT_EQ(RdmaProgram(spec), "ib_write_bw");
  EXPECT_THAT(Argv(spec),
              ElementsAre("/usr/bin/tool", "-d", "mlx5_0", "-i", "1", "-x", "3", "-p", "18515",
                          "-s", "65536", "-D", "2", "-q", "1", "--report_gbits", "-F"));
  spec.server = Ipv4Address(0x0ac80102);  // 10.200.1.2
  spec.bind = Ipv4Address(0x0ac80101);
  spec.queue_pairs = 4;
  spec.duration_seconds = 5;
  EXPECT_THAT(Argv(spec),
              ElementsAre("/usr/bin/tool", "-d", "mlx5_0", "-i", "1", "-x", "3", "-p", "18515",
                          "-s", "65536", "-D", "5", "-q", "4", "--report_gbits", "-F",
                          "--source_ip", "10.200.1.1", "10.200.1.2"));
}

TEST(RdmaBenchArgvTest, PerftestLatencyRunsIterationsNotADuration) {
  RdmaBenchSpec spec = Spec(RdmaTool::kPerftest, RdmaTest::kWriteLatency);
  spec.message_bytes = 2;
  spec.server = Ipv4Address(0x0ac80102);
  EXPECT_EQ(RdmaProgram(spec), "ib_write_lat");
  EXPECT_THAT(Argv(spec), ElementsAre("/usr/bin/tool", "-d", "mlx5_0", "-i", "1", "-x", "3", "-p",
                                      "18515", "-s", "2", "-n", "100000", "-F", "10.200.1.2"));
  spec.duration_seconds = 600;  // capped: perftest keeps every sample
  EXPECT_THAT(Argv(spec), ::testing::Contains("1000000"));
  // Asked for: a slow link's round trips.
  spec.iterations = 200;
  EXPECT_THAT(Argv(spec), ElementsAre("/usr/bin/tool", "-d", "mlx5_0", "-i", "1", "-x", "3", "-p",
                                      "18515", "-s", "2", "-n", "200", "-F", "10.200.1.2"));
  spec.iterations = 1000001;
  EXPECT_THAT(RdmaBenchArgv("/usr/bin/tool", spec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("iterations")));
}

TEST(RdmaBenchArgvTest, HblPerfTestBandwidthAndLatency) {
  RdmaBenchSpec spec = Spec(RdmaTool::kHblPerfTest, RdmaTest::kWriteBandwidth);
  spec.message_bytes = 1 << 20;
  spec.bind = Ipv4Address(0x0ac80101);  // perf_test cannot bind: ignored
  EXPECT_EQ(RdmaProgram(spec), "perf_test");
  // 2 s at 200 Gb/s in 1 MiB messages: 47684 messages.
  EXPECT_THAT(Argv(spec), ElementsAre("/usr/bin/tool", "-t", "bw", "-d", "hbl_0", "-i", "1", "-g",
                                      "3", "-p", "18515", "-s", "1048576", "-n", "47684"));
  spec.test = RdmaTest::kWriteLatency;
  spec.server = Ipv4Address(0x0ac80102);
  EXPECT_THAT(Argv(spec),
              ElementsAre("/usr/bin/tool", "-t", "lt", "-d", "hbl_0", "-i", "1", "-g", "3", "-p",
                          "18515", "-s", "1048576", "-n", "100000", "10.200.1.2"));
}

TEST(RdmaBenchArgvTest, EveryFieldIsChecked) {
  auto error = [](void (*change)(RdmaBenchSpec&), RdmaTool tool, RdmaTest test) {
    RdmaBenchSpec spec = Spec(tool, test);
    change(spec);
    return RdmaBenchArgv("/usr/bin/tool", spec).status();
  };
  const RdmaTool pt = RdmaTool::kPerftest, hbl = RdmaTool::kHblPerfTest;
  const RdmaTest bw = RdmaTest::kWriteBandwidth, lat = RdmaTest::kWriteLatency;
  auto invalid = [](absl::string_view field) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(absl::StrCat(field, ":")));
  };
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.device = ""; }, pt, bw), invalid("device"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.device = "mlx5_0 -a"; }, pt, bw), invalid("device"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.device = "-dmlx"; }, pt, bw), ::absl::OkStatus());
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.device = std::string(65, 'a'); }, pt, bw),
              invalid("device"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.ib_port = 0; }, pt, bw), invalid("ib_port"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.ib_port = 256; }, pt, bw), invalid("ib_port"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.gid_index = -1; }, pt, bw), invalid("gid_index"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.gid_index = 65; }, pt, bw), invalid("gid_index"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.gid_index = 65; }, hbl, bw), ::absl::OkStatus());
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.tcp_port = 0; }, pt, bw), invalid("tcp_port"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.message_bytes = 0; }, pt, bw),
              invalid("message_bytes"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.message_bytes = kMaxRdmaMessageBytes + 1; }, pt, bw),
              invalid("message_bytes"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.duration_seconds = 0; }, pt, bw),
              invalid("duration_seconds"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.duration_seconds = 601; }, pt, lat),
              invalid("duration_seconds"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.queue_pairs = 0; }, pt, bw), invalid("queue_pairs"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.queue_pairs = 65; }, pt, bw), invalid("queue_pairs"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.queue_pairs = 2; }, pt, lat), invalid("queue_pairs"));
  EXPECT_THAT(error([](RdmaBenchSpec& s) { s.queue_pairs = 2; }, hbl, bw), invalid("queue_pairs"));
}

TEST(RdmaServerReadyTextTest, IsWhatTheServersPrint) {
  EXPECT_THAT(Fixture("perftest-write-bw-server.txt"),
              HasSubstr(std::string(RdmaServerReadyText(RdmaTool::kPerftest))));
  EXPECT_THAT(Fixture("hbl-perf-test-bw-server.txt"),
              HasSubstr(std::string(RdmaServerReadyText(RdmaTool::kHblPerfTest))));
}

TEST(ParseRdmaBenchOutputTest, PerftestBandwidthInGbits) {
  for (const char* file : {"perftest-write-bw-gbits.txt", "perftest-write-bw-server.txt"}) {
    absl::StatusOr<RdmaMeasure> m =
        ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth, Fixture(file));
    ASSERT_OK(m) << file;
    EXPECT_EQ(m->message_bytes, 65536u);
    EXPECT_EQ(m->iterations, 364215u);
    EXPECT_DOUBLE_EQ(m->bits_per_second, 95.47e9);
    EXPECT_DOUBLE_EQ(m->peak_bits_per_second, 0);
  }
}

TEST(ParseRdmaBenchOutputTest, PerftestBandwidthInMebibytesRecorded) {
  absl::StatusOr<RdmaMeasure> m =
      ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth,
                           Fixture("perftest-write-bw-mib-recorded.txt"));
  ASSERT_OK(m);
  EXPECT_EQ(m->message_bytes, 8388608u);
  EXPECT_EQ(m->iterations, 20000u);
  // MB/sec is MiB (2^20 bytes) per second.
  EXPECT_THAT(m->bits_per_second, DoubleNear(24056.72 * 8 * 1048576, 1));
  EXPECT_THAT(m->peak_bits_per_second, DoubleNear(24056.74 * 8 * 1048576, 1));
}

TEST(ParseRdmaBenchOutputTest, PerftestLatencyPercentiles) {
  absl::StatusOr<RdmaMeasure> m = ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteLatency,
                                                       Fixture("perftest-write-lat.txt"));
  ASSERT_OK(m);
  EXPECT_EQ(m->message_bytes, 2u);
  EXPECT_EQ(m->iterations, 100000u);
  EXPECT_DOUBLE_EQ(m->latency_min_us, 1.84);
  EXPECT_DOUBLE_EQ(m->latency_max_us, 9.71);
  EXPECT_DOUBLE_EQ(m->latency_p50_us, 1.93);
  EXPECT_DOUBLE_EQ(m->latency_avg_us, 1.97);
  EXPECT_DOUBLE_EQ(m->latency_p99_us, 2.60);
  EXPECT_DOUBLE_EQ(m->latency_p999_us, 6.05);
  EXPECT_DOUBLE_EQ(m->bits_per_second, 0);
}

TEST(ParseRdmaBenchOutputTest, PerftestWarningsBetweenHeaderAndRowAreSkipped) {
  std::string out = Fixture("perftest-write-lat.txt");
  size_t row = out.find(" 2       100000");
  out.insert(row,
             "Conflicting CPU frequency values detected: 1500.000000 != 3100.000000. "
             "CPU Frequency is not max.\n");
  absl::StatusOr<RdmaMeasure> m =
      ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteLatency, out);
  ASSERT_OK(m);
  EXPECT_DOUBLE_EQ(m->latency_p999_us, 6.05);
}

TEST(ParseRdmaBenchOutputTest, PerftestWithoutADeviceSaysSoInItsOwnWords) {
  EXPECT_THAT(
      ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth, "",
                           Fixture("perftest-no-device.stderr")),
      StatusIs(absl::StatusCode::kNotFound,
               AllOf(HasSubstr("ib_write_bw: no result"), HasSubstr("Did not detect devices"),
                     HasSubstr("Unable to find the Infiniband/RoCE device"))));
  EXPECT_THAT(ParseRdmaBenchOutput(
                  RdmaTool::kPerftest, RdmaTest::kWriteLatency, "",
                  "IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("ib_write_lat: no result; it said: "
                                                              "IB device mlx5_9 not found")));
}

TEST(ParseRdmaBenchOutputTest, PerftestWithoutItsPeerIsUnavailable) {
  EXPECT_THAT(
      ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth, "",
                           Fixture("perftest-connect-refused.stderr")),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("Couldn't connect to 10.200.1.2:18515")));
}

TEST(ParseRdmaBenchOutputTest, PerftestOtherFailuresAndTruncatedOutput) {
  EXPECT_THAT(ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth, "",
                                   " Couldn't get context for the device\n"),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("Couldn't get context")));
  std::string out = Fixture("perftest-write-bw-gbits.txt");
  out = out.substr(0, out.find(" 65536"));  // killed before the row
  EXPECT_THAT(ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth, out),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("no result row")));
  // A latency header is not a bandwidth result.
  EXPECT_THAT(ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteBandwidth,
                                   Fixture("perftest-write-lat.txt")),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("ib_write_bw: no result")));
  EXPECT_THAT(ParseRdmaBenchOutput(RdmaTool::kPerftest, RdmaTest::kWriteLatency, ""),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("ib_write_lat: no result")));
}

TEST(ParseRdmaBenchOutputTest, HblPerfTestBandwidth) {
  absl::StatusOr<RdmaMeasure> m = ParseRdmaBenchOutput(
      RdmaTool::kHblPerfTest, RdmaTest::kWriteBandwidth, Fixture("hbl-perf-test-bw-server.txt"));
  ASSERT_OK(m);
  EXPECT_DOUBLE_EQ(m->bits_per_second, 186.84e9);
  EXPECT_EQ(m->iterations, 50000u);
  EXPECT_EQ(m->message_bytes, 1000000u);
  EXPECT_DOUBLE_EQ(m->peak_bits_per_second, 0);
}

TEST(ParseRdmaBenchOutputTest, HblPerfTestLatencyHasNoPercentiles) {
  absl::StatusOr<RdmaMeasure> m = ParseRdmaBenchOutput(
      RdmaTool::kHblPerfTest, RdmaTest::kWriteLatency, Fixture("hbl-perf-test-lat-client.txt"));
  ASSERT_OK(m);
  EXPECT_DOUBLE_EQ(m->latency_avg_us, 3.12);
  EXPECT_DOUBLE_EQ(m->latency_min_us, 2.50);
  EXPECT_DOUBLE_EQ(m->latency_max_us, 27.00);
  EXPECT_DOUBLE_EQ(m->latency_p50_us, 0);
  EXPECT_DOUBLE_EQ(m->latency_p99_us, 0);
}

TEST(ParseRdmaBenchOutputTest, HblPerfTestFailures) {
  EXPECT_THAT(ParseRdmaBenchOutput(RdmaTool::kHblPerfTest, RdmaTest::kWriteBandwidth,
                                   Fixture("hbl-perf-test-no-device.txt")),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("perf_test: no \"Test RX Bandwidth\" line"),
                             HasSubstr("it said: Failed to find device | Failed to Init device "
                                       "dev_name = hbl_7"))));
  absl::Status conn = ParseRdmaBenchOutput(RdmaTool::kHblPerfTest, RdmaTest::kWriteLatency,
                                           Fixture("hbl-perf-test-connect-timeout.txt"))
                          .status();
  EXPECT_THAT(conn, StatusIs(absl::StatusCode::kUnavailable,
                             HasSubstr("Connection timed out after 10 seconds")));
  EXPECT_THAT(conn.message(), ::testing::Not(HasSubstr("\033")));  // colours stripped
  // A bandwidth line is not a latency result.
  EXPECT_THAT(ParseRdmaBenchOutput(RdmaTool::kHblPerfTest, RdmaTest::kWriteLatency,
                                   Fixture("hbl-perf-test-bw-server.txt")),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("no \"Average Latency\" line")));
}

}  // namespace
}  // namespace rocenet::diag
