// SPDX-License-Identifier: Apache-2.0
// DiagEngine end to end on loopback: data ports on 127.0.0.1-3, the
// coordinator's all-reduce, bandwidth and incast over real TCP sockets.
// Hermetic: loopback only, free ports picked by the kernel, no root needed
// (ports without a name are bound by address, not by device).
#include "daemon/diag/linux/engine.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/wire/convert.h"
#include "daemon/os/linux/system_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

constexpr int kNodes = 3;
constexpr char kSecret[] = "0123456789abcdef-cluster";

Ipv4Address Loopback(int i) { return *Ipv4Address::Parse(absl::StrCat("127.0.0.", i + 1)); }

// A port the kernel just handed out on `address`, free again now.
uint16_t FreePort(Ipv4Address address) {
  absl::StatusOr<Fd> fd = os::ListenTcp(address, 0);
  if (!fd.ok()) return 0;
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  getsockname(fd->get(), reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kNodes; ++i) {
      ports_.push_back(FreePort(Loopback(i)));
      ASSERT_NE(ports_.back(), 0);
      LocalPort port;
      port.name = "";  // bound by address only
      port.address = Ipv4Prefix(Loopback(i), 8);
      port.gateway = Loopback(i);
      port.network = *Ipv4Prefix::Parse("127.0.0.0/8");
      port.rail = "127.0.0.0/8";
      port.up = true;
      engines_.push_back(std::make_unique<DiagEngine>(
          EngineOptions{
              .data_port = ports_.back(),
              .node_name = absl::StrCat("n", i),
              .clock = &clock_,
              .secret = [] { return absl::StatusOr<std::string>(kSecret); },
              .validation = nullptr,
              .runner = nullptr,
              // Node i's retries rise by i at every read.
              .counters = [this, i]() -> absl::StatusOr<std::vector<peer::PortCounterValues>> {
                const uint64_t reads = counter_reads_[i]++;
                return std::vector<peer::PortCounterValues>{
                    {.port = "p0", .values = {{"transport.retry", reads * i}}}};
              }},
          [port]() -> absl::StatusOr<std::vector<LocalPort>> {
            return std::vector<LocalPort>{port};
          }));
      ASSERT_OK(engines_.back()->Start());
      engines_.back()->SetAddresses({Loopback(i)});
    }
    // The listeners bind on their own thread.
    absl::SleepFor(absl::Milliseconds(200));
  }

  std::string Node(int i) const { return absl::StrCat(Loopback(i).ToString(), ":", ports_[i]); }

  std::vector<uint16_t> ports_;
  std::atomic<uint64_t> counter_reads_[kNodes] = {};
  os::SystemClock clock_;
  std::vector<std::unique_ptr<DiagEngine>> engines_;
  Progress ignore_ = [](const std::string&, double) {};
};

TEST_F(EngineTest, AllreduceOverThreeRanksIsVerifiedWithNcclBusBandwidth) {
  AllreduceRequest request;
  for (int i = 0; i < kNodes; ++i) request.nodes.push_back(Node(i));
  request.min_bytes = 1000;  // not a multiple of 3 floats: uneven chunks
  request.max_bytes = 256 << 10;
  request.iterations = 2;
  request.timeout_ms = 10000;
  absl::StatusOr<AllreduceRequest> normal = NormalizeAllreduce(request);
  ASSERT_OK(normal);
  absl::StatusOr<AllreduceResult> result = engines_[0]->Allreduce(*normal, ignore_, nullptr);
  ASSERT_OK(result);
  EXPECT_TRUE(result->ok) << wire::ToProto(*result).DebugString();
  EXPECT_THAT(result->nodes, ::testing::ElementsAre("n0", "n1", "n2"));
  ASSERT_EQ(result->rails.size(), 1);
  const RailResult& rail = result->rails[0];
  std::vector<uint64_t> sizes;
  for (const AllreduceSize& size : rail.sizes) sizes.push_back(size.bytes);
  EXPECT_THAT(sizes, ::testing::ElementsAre(1000, 4000, 16000, 64000, 256000, 256 << 10));
  for (const AllreduceSize& size : rail.sizes) {
    EXPECT_TRUE(size.verified);
    EXPECT_GT(size.seconds, 0);
    EXPECT_DOUBLE_EQ(size.busbw_bytes_per_second, size.algbw_bytes_per_second * 4 / 3);
  }
  // Every rank's counters, asked over the data port before and after.
  EXPECT_EQ(result->counters.nodes_read, kNodes);
  EXPECT_THAT(result->counters.unread, ::testing::IsEmpty());
  EXPECT_THAT(result->counters.changes,
              ::testing::ElementsAre(CounterChange{.node = "n1",
                                                   .port = "p0",
                                                   .counter = "transport.retry",
                                                   .increase = 1,
                                                   .reset = false},
                                     CounterChange{.node = "n2",
                                                   .port = "p0",
                                                   .counter = "transport.retry",
                                                   .increase = 2,
                                                   .reset = false}));
  ASSERT_EQ(rail.links.size(), kNodes);
  int slowest = 0;
  for (const RingLink& link : rail.links) {
    EXPECT_GT(link.bits_per_second, 0);
    slowest += link.slowest ? 1 : 0;
  }
  EXPECT_EQ(slowest, 1);
}

TEST_F(EngineTest, AllreduceWithADeadRankReportsTheRailBrokenInTime) {
  engines_[2]->Stop();
  AllreduceRequest request;
  for (int i = 0; i < kNodes; ++i) request.nodes.push_back(Node(i));
  request.timeout_ms = 2000;
  absl::StatusOr<AllreduceRequest> normal = NormalizeAllreduce(request);
  ASSERT_OK(normal);
  const absl::Time start = absl::Now();
  absl::StatusOr<AllreduceResult> result = engines_[0]->Allreduce(*normal, ignore_, nullptr);
  ASSERT_OK(result);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_FALSE(result->ok);
  ASSERT_FALSE(result->problems.empty());
  EXPECT_THAT(result->problems[0], ::testing::HasSubstr(Node(2)));
}

// A daemon that accepts but never answers holds the coordinator only until
// this daemon stops.
TEST_F(EngineTest, StopEndsACoordinatedTestAtOnce) {
  const Ipv4Address mute = Loopback(kNodes);
  absl::StatusOr<Fd> listener = os::ListenTcp(mute, 0);
  ASSERT_OK(listener);
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  getsockname(listener->get(), reinterpret_cast<sockaddr*>(&sa), &len);
  AllreduceRequest request;
  request.nodes.push_back(Node(0));
  request.nodes.push_back(absl::StrCat(mute.ToString(), ":", ntohs(sa.sin_port)));
  absl::StatusOr<AllreduceRequest> normal = NormalizeAllreduce(request);
  ASSERT_OK(normal);
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(200));
    engines_[0]->Stop();
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<AllreduceResult> result = engines_[0]->Allreduce(*normal, ignore_, nullptr);
  const absl::Duration took = absl::Now() - start;
  stopper.join();
  ASSERT_OK(result);
  EXPECT_FALSE(result->ok);
  EXPECT_LT(took, absl::Milliseconds(1500));  // the call's own bound is 3 s
}

TEST_F(EngineTest, BandwidthBothWays) {
  BandwidthRequest request;
  request.port = "";  // the loopback port has no name
  request.peer = Node(1);
  request.streams = 2;
  request.duration_ms = 300;
  absl::StatusOr<BandwidthResult> result = engines_[0]->Bandwidth(request, ignore_, nullptr);
  // The port is looked up by name; an unnamed one is found.
  ASSERT_OK(result);
  EXPECT_TRUE(result->ok) << wire::ToProto(*result).DebugString();
  ASSERT_EQ(result->directions.size(), 2);
  for (const DirectionResult& d : result->directions) {
    EXPECT_GT(d.bits_per_second, 0) << d.direction;
    EXPECT_EQ(d.streams.size(), 2);
  }
}

TEST_F(EngineTest, IncastFairnessIsJainsIndexOfTheSenders) {
  IncastRequest request;
  request.port = "";
  request.senders.push_back(Node(1));
  request.senders.push_back(Node(2));
  request.duration_ms = 300;
  request.streams = 1;
  absl::StatusOr<IncastResult> result = engines_[0]->Incast(request, ignore_, nullptr);
  ASSERT_OK(result);
  EXPECT_TRUE(result->ok) << wire::ToProto(*result).DebugString();
  ASSERT_EQ(result->senders.size(), 2);
  const double a = result->senders[0].bits_per_second;
  const double b = result->senders[1].bits_per_second;
  EXPECT_GT(a, 0);
  EXPECT_GT(b, 0);
  EXPECT_DOUBLE_EQ(result->fairness, (a + b) * (a + b) / (2 * (a * a + b * b)));
  EXPECT_EQ(result->senders[0].node, "n1");
}

// What anyone on the fabric can send: a request without the cluster's MAC.
// The data port answers nothing, closes, and counts it.
TEST_F(EngineTest, AForgedRequestToTheDataPortIsRefusedAndCounted) {
  for (const bool with_wrong_secret : {false, true}) {
    absl::StatusOr<Fd> fd =
        os::ConnectTcp(clock_, nullptr, Loopback(1), ports_[1], absl::Now() + absl::Seconds(2));
    ASSERT_OK(fd.status());
    const peer::PeerRequest request{.kind = peer::SendRequest{.address = Loopback(2).ToString()}};
    // Without a secret: the request's bytes in an envelope without a MAC.
    const peer::PeerEnvelope envelope =
        with_wrong_secret
            ? SignPeerRequest(wire::SerializeRequest(request), "not-the-cluster-secret",
                              Loopback(1), ports_[1], "intruder", absl::Now(),
                              std::string(kNonceBytes, 'n'))
            : peer::PeerEnvelope{.request = wire::SerializeRequest(request), .auth = {}};
    ASSERT_OK(WriteEnvelope(clock_, fd->get(), envelope, absl::Now() + absl::Seconds(2)));
    EXPECT_FALSE(ReadReply(clock_, fd->get(), absl::Now() + absl::Seconds(3)).ok());
  }
  const std::map<std::string, uint64_t> refused = engines_[1]->PeerRefusals();
  EXPECT_EQ(refused.at("unauthenticated"), 1u);
  EXPECT_EQ(refused.at("bad_mac"), 1u);
}

TEST(EngineNoSecretTest, WithoutASecretTheDataPortStaysClosedAndPeerTestsAreRefused) {
  os::SystemClock clock;
  const uint16_t port = FreePort(Loopback(0));
  DiagEngine engine(
      {.data_port = port,
       .node_name = "lonely",
       .clock = &clock,
       .secret = nullptr,
       .validation = nullptr,
       .runner = nullptr},
      [] { return absl::StatusOr<std::vector<LocalPort>>(std::vector<LocalPort>{}); });
  ASSERT_OK(engine.Start());
  engine.SetAddresses({Loopback(0)});
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_FALSE(
      os::ConnectTcp(clock, nullptr, Loopback(0), port, absl::Now() + absl::Seconds(1)).ok());
  BandwidthRequest request;
  request.port = "so0";
  request.peer = "127.0.0.2";
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  EXPECT_THAT(engine
                  .Bandwidth(
                      normal, [](const std::string&, double) {}, nullptr)
                  .status(),
              ::rocenet::testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                           ::testing::HasSubstr("--secret-file")));
}

}  // namespace
}  // namespace rocenet::diag
