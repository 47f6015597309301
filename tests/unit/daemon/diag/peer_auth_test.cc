// SPDX-License-Identifier: Apache-2.0
// The data port's admission: a request signed with the cluster's secret for
// this daemon passes once; a missing or wrong MAC, another secret, another
// destination, a stale time, a replay and a flood are refused and counted.
#include "daemon/diag/peer_auth.h"

#include <string>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kSecret[] = "the-cluster-secret-0123";
const Ipv4Address kHere = *Ipv4Address::Parse("10.201.1.1");
const Ipv4Address kPeer = *Ipv4Address::Parse("10.201.2.1");
constexpr uint16_t kPort = 50153;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// The bytes of a serialized request: the gate checks them, never reads them.
const std::string kRequest = "\x0a\x00 an info request";

std::string Nonce(char c) { return std::string(kNonceBytes, c); }

peer::PeerEnvelope Signed(char nonce = 'a', absl::Time at = kNow, Ipv4Address to = kHere,
                          const char* secret = kSecret) {
  return SignPeerRequest(kRequest, secret, to, kPort, "n2", at, Nonce(nonce));
}

TEST(PeerAuthTest, ASignedRequestIsAdmittedOnceAndAReplayIsRefused) {
  PeerGate gate;
  ASSERT_OK_AND_ASSIGN(PeerGate::Admitted admitted,
                       gate.Admit(Signed(), kSecret, kPeer, kHere, kPort, kNow));
  EXPECT_EQ(admitted.request, kRequest);
  EXPECT_EQ(admitted.node, "n2");
  EXPECT_THAT(gate.Admit(Signed(), kSecret, kPeer, kHere, kPort, kNow + absl::Seconds(1)),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("nonce seen before")));
  EXPECT_EQ(gate.Refusals().at("replayed"), 1u);
}

TEST(PeerAuthTest, ForgedRequestsAreRefusedAndCountedByReason) {
  PeerGate gate;
  // No MAC at all: what anyone on the fabric can send.
  peer::PeerEnvelope bare;
  bare.request = kRequest;
  EXPECT_THAT(gate.Admit(bare, kSecret, kPeer, kHere, kPort, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("not signed")));
  // Signed with another cluster's secret.
  EXPECT_THAT(gate.Admit(Signed('b', kNow, kHere, "another-cluster-secret!!"), kSecret, kPeer,
                         kHere, kPort, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("MAC does not match")));
  // A request captured on its way to another daemon.
  EXPECT_THAT(gate.Admit(Signed('c', kNow, kPeer), kSecret, kPeer, kHere, kPort, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("MAC does not match")));
  // A request altered after signing.
  peer::PeerEnvelope altered = Signed('d');
  altered.request = "\x3a\x0c a send request to 10.201.3.1";
  EXPECT_THAT(gate.Admit(altered, kSecret, kPeer, kHere, kPort, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated));
  // An old one: its MAC holds, so its sender has the secret and is told
  // that the clocks disagree, and by how much.
  EXPECT_THAT(gate.Admit(Signed('e', kNow - absl::Minutes(5)), kSecret, kPeer, kHere, kPort, kNow),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("(node n2): its request was signed 5m behind this node's clock, "
                                 "more than the 1m allowed")));
  // One from a node whose clock is 90 s ahead.
  EXPECT_THAT(gate.Admit(Signed('f', kNow + absl::Seconds(90)), kSecret, kPeer, kHere, kPort, kNow),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("signed 1m30s ahead of")));
  const auto refused = gate.Refusals();
  EXPECT_EQ(refused.at("unauthenticated"), 1u);
  EXPECT_EQ(refused.at("bad_mac"), 3u);
  EXPECT_EQ(refused.at("stale"), 2u);
}

TEST(PeerAuthTest, AFloodFromOnePeerIsCutOffAfterTheBurstOthersStillPass) {
  PeerGate gate;
  int admitted = 0, limited = 0;
  for (int i = 0; i < 200; ++i) {
    peer::PeerEnvelope envelope =
        SignPeerRequest(kRequest, kSecret, kHere, kPort, "n2", kNow, absl::StrFormat("%016d", i));
    absl::StatusOr<PeerGate::Admitted> result =
        gate.Admit(envelope, kSecret, kPeer, kHere, kPort, kNow);
    if (result.ok()) ++admitted;
    if (absl::IsResourceExhausted(result.status())) ++limited;
  }
  EXPECT_EQ(admitted, static_cast<int>(kPeerRequestBurst));
  EXPECT_EQ(limited, 200 - static_cast<int>(kPeerRequestBurst));
  // Another node is not held back by the flood; the flooder gets tokens back
  // with time.
  EXPECT_OK(gate.Admit(Signed('x'), kSecret, *Ipv4Address::Parse("10.201.3.1"), kHere, kPort, kNow)
                .status());
  EXPECT_OK(
      gate.Admit(Signed('y'), kSecret, kPeer, kHere, kPort, kNow + absl::Seconds(1)).status());
  EXPECT_EQ(gate.Refusals().at("rate_limited"), 200u - static_cast<unsigned>(kPeerRequestBurst));
}

TEST(PeerAuthTest, ASecretTooShortIsRefusedNamingItsFile) {
  EXPECT_THAT(ParseSecret("short\n", "diag secret /etc/rocenet/diag/secret"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/etc/rocenet/diag/secret: the shared secret has 5 bytes")));
  ASSERT_OK_AND_ASSIGN(std::string secret, ParseSecret("  0123456789abcdef\n", "f"));
  EXPECT_EQ(secret, "0123456789abcdef");
}

}  // namespace
}  // namespace rocenet::diag
