// SPDX-License-Identifier: Apache-2.0
// The diagnostics' socket primitives on loopback: real TCP connections and
// (with CAP_NET_RAW) a real ICMP echo, as the data port and the reach probes
// use them.
#include "daemon/os/linux/tcp_socket.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/os/linux/probe_socket.h"
#include "daemon/os/linux/system_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;

const Ipv4Address kLoopback = *Ipv4Address::Parse("127.0.0.1");

uint16_t PortOf(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

// A connected pair: the client's end and the accepted end.
struct Pair {
  Fd client;
  Fd server;
};

Pair Connect(const Clock& clock) {
  absl::StatusOr<Fd> listener = ListenTcp(kLoopback, 0);
  EXPECT_OK(listener.status());
  if (!listener.ok()) return {};
  absl::StatusOr<Fd> client = ConnectTcp(clock, nullptr, kLoopback, PortOf(listener->get()),
                                         clock.Now() + absl::Seconds(2));
  EXPECT_OK(client.status());
  if (!client.ok()) return {};
  EXPECT_OK(WaitFd(clock, listener->get(), false, clock.Now() + absl::Seconds(2)));
  return {std::move(*client), AcceptTcp(listener->get())};
}

class TcpSocketTest : public ::testing::Test {
 protected:
  SystemClock clock_;
};

TEST_F(TcpSocketTest, AFrameArrivesWholeAndNamesBothEnds) {
  Pair pair = Connect(clock_);
  ASSERT_TRUE(pair.server.valid());
  const std::string payload(100000, 'x');  // more than one segment
  ASSERT_OK(WriteFrame(clock_, pair.client.get(), payload, clock_.Now() + absl::Seconds(2)));
  absl::StatusOr<std::string> got =
      ReadFrame(clock_, pair.server.get(), clock_.Now() + absl::Seconds(2));
  ASSERT_OK(got.status());
  EXPECT_EQ(*got, payload);
  ASSERT_OK_AND_ASSIGN(TcpEnds ends, EndsOf(pair.server.get()));
  EXPECT_EQ(ends.local, kLoopback);
  EXPECT_EQ(ends.peer, kLoopback);
}

TEST_F(TcpSocketTest, AFrameAboveTheLimitIsRefusedOnBothSides) {
  Pair pair = Connect(clock_);
  ASSERT_TRUE(pair.server.valid());
  EXPECT_THAT(WriteFrame(clock_, pair.client.get(), std::string(kMaxFrameBytes + 1, 'x'),
                         clock_.Now() + absl::Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("above the limit")));
  const uint32_t huge = htonl(kMaxFrameBytes + 1);
  ASSERT_OK(
      WriteAll(clock_, pair.client.get(), &huge, sizeof(huge), clock_.Now() + absl::Seconds(1)));
  EXPECT_THAT(ReadFrame(clock_, pair.server.get(), clock_.Now() + absl::Seconds(1)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("above the limit")));
}

TEST_F(TcpSocketTest, AReadEndsAtItsDeadlineAndOnCancel) {
  Pair pair = Connect(clock_);
  ASSERT_TRUE(pair.server.valid());
  const absl::Time start = clock_.Now();
  EXPECT_THAT(ReadFrame(clock_, pair.server.get(), start + absl::Milliseconds(200)).status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_GE(clock_.Now() - start, absl::Milliseconds(200));

  Wakeup cancel;
  ASSERT_OK(cancel.Open());
  cancel.Signal();
  EXPECT_THAT(
      WaitFd(clock_, pair.server.get(), false, clock_.Now() + absl::Seconds(5), cancel.fd()),
      StatusIs(absl::StatusCode::kCancelled));
  cancel.Clear();
  ASSERT_OK_AND_ASSIGN(std::vector<bool> readable,
                       PollReadable({cancel.fd()}, absl::ZeroDuration()));
  EXPECT_FALSE(readable[0]);
}

TEST_F(TcpSocketTest, AStreamIsDrainedUntilTheSenderHalfCloses) {
  Pair pair = Connect(clock_);
  ASSERT_TRUE(pair.server.valid());
  absl::Status sent;
  std::thread sender([&] {
    sent = StreamUntil(clock_, pair.client.get(), clock_.Now() + absl::Milliseconds(200));
  });
  const Drained drained =
      DrainUntilClosed(clock_, pair.server.get(), clock_.Now() + absl::Seconds(5));
  sender.join();
  ASSERT_OK(sent);
  ASSERT_OK(drained.status);
  EXPECT_GT(drained.bytes, 0u);
  EXPECT_GT(drained.last, drained.first);
  EXPECT_LE(drained.last - drained.first, absl::Seconds(2));
}

TEST_F(TcpSocketTest, ARingExchangeMovesBothWaysAtOnce) {
  // Two ranks, each sending the other more than a socket buffer holds: a
  // send-then-receive would block both.
  Pair pair = Connect(clock_);
  ASSERT_TRUE(pair.server.valid());
  const size_t size = 8 << 20;
  std::string a_out(size, 'a'), b_out(size, 'b'), a_in(size, '\0'), b_in(size, '\0');
  ExchangeResult b_result;
  std::thread b([&] {
    b_result = Exchange(clock_, pair.server.get(), b_out.data(), size, pair.server.get(),
                        b_in.data(), size, clock_.Now() + absl::Seconds(10), -1);
  });
  const ExchangeResult a_result =
      Exchange(clock_, pair.client.get(), a_out.data(), size, pair.client.get(), a_in.data(), size,
               clock_.Now() + absl::Seconds(10), -1);
  b.join();
  ASSERT_OK(a_result.status);
  ASSERT_OK(b_result.status);
  EXPECT_EQ(a_in, b_out);
  EXPECT_EQ(b_in, a_out);
}

TEST_F(TcpSocketTest, AClosedPreviousRankIsNamedOnTheIncomingSide) {
  Pair pair = Connect(clock_);
  ASSERT_TRUE(pair.server.valid());
  pair.client.reset();
  char in[16];
  const ExchangeResult result = Exchange(clock_, -1, nullptr, 0, pair.server.get(), in, sizeof(in),
                                         clock_.Now() + absl::Seconds(2), -1);
  EXPECT_THAT(result.status, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("closed")));
  EXPECT_STREQ(result.side, "in");
}

TEST_F(TcpSocketTest, ConnectingToNothingNamesThePeer) {
  absl::StatusOr<Fd> listener = ListenTcp(kLoopback, 0);
  ASSERT_OK(listener.status());
  const uint16_t port = PortOf(listener->get());
  listener->reset();
  EXPECT_THAT(
      ConnectTcp(clock_, nullptr, kLoopback, port, clock_.Now() + absl::Seconds(2)).status(),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr(absl::StrCat("127.0.0.1:", port))));
}

TEST_F(TcpSocketTest, AnEchoToLoopbackIsAnsweredWithItsIdAndSequence) {
  absl::StatusOr<IcmpEchoSocket> icmp = IcmpEchoSocket::Open("lo", kLoopback);
  if (!icmp.ok() && absl::StrContains(icmp.status().message(), "ermi")) {
    GTEST_SKIP() << "a raw ICMP socket needs CAP_NET_RAW: " << icmp.status();
  }
  ASSERT_OK(icmp.status());
  ASSERT_OK(icmp->SendEcho(kLoopback, 0x1234, 7, 56));
  std::optional<EchoReply> reply;
  const absl::Time deadline = clock_.Now() + absl::Seconds(2);
  while (!reply && clock_.Now() < deadline) {
    ASSERT_OK(WaitFd(clock_, icmp->fd(), false, deadline));
    reply = icmp->Receive();
  }
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->from, kLoopback);
  EXPECT_EQ(reply->id, 0x1234);
  EXPECT_EQ(reply->sequence, 7);
}

TEST_F(TcpSocketTest, AnArpSocketOnAMissingDeviceNamesIt) {
  absl::StatusOr<ArpSocket> arp = ArpSocket::Open("nosuchport0");
  ASSERT_FALSE(arp.ok());
  if (absl::StrContains(arp.status().message(), "ARP socket")) {
    GTEST_SKIP() << "a packet socket needs CAP_NET_RAW: " << arp.status();
  }
  EXPECT_THAT(arp.status().message(), HasSubstr("ARP: MAC of nosuchport0"));
}

}  // namespace
}  // namespace rocenet::os
