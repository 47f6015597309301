// SPDX-License-Identifier: Apache-2.0
// Who may talk to the data port: only daemons of this cluster, proven by an
// HMAC-SHA256 over each connection's request with the cluster's shared
// secret (mounted from a Kubernetes Secret), and no peer faster than a
// fixed rate.
//
// The sender signs (SignPeerRequest) the exact bytes of the request it sends
// together with the receiver's address and data port, the time and a fresh
// nonce; the receiver (PeerGate) checks the rate of the source address
// first, then the MAC, the time (within kAuthSkew) and that the nonce was
// not seen within that window. So a request captured on the fabric cannot
// be replayed, neither to the same daemon nor to another one, and a host
// without the secret cannot start a test anywhere.
//
// Pure computation: the caller brings the nonce and the time. SignPeerRequest
// is thread-safe; PeerGate is thread-safe (one mutex). Errors are
// Unauthenticated (no or a wrong MAC, a replayed nonce), FailedPrecondition
// (a request with a good MAC signed too far from this node's time: the
// clocks disagree, the one refusal its sender may be told, having proved it
// holds the secret), ResourceExhausted (over the rate) or InvalidArgument (a
// secret too short), each naming the peer and the reason.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

// How far a request's time may be from the receiver's clock, either way.
inline constexpr absl::Duration kAuthSkew = absl::Seconds(60);
// The shortest secret accepted: 16 bytes (128 bits).
inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kNonceBytes = 16;
// Requests per source address: a sustained rate and a burst. An all-reduce
// over 64 nodes opens two connections to each rank, a 16-stream bandwidth
// test 16 at once; a flood of forged requests is cut off after the burst.
inline constexpr double kPeerRequestsPerSecond = 20;
inline constexpr double kPeerRequestBurst = 64;

// The secret from a file's contents: surrounding white space (the newline an
// editor or `kubectl create secret --from-file` leaves) is not part of it.
// InvalidArgument naming `origin` when shorter than kMinSecretBytes.
absl::StatusOr<std::string> ParseSecret(absl::string_view contents, absl::string_view origin);

// The envelope for `request` (a serialized PeerRequest, the exact bytes
// sent) to the daemon at `to`:`data_port`, from node `node`, signed with
// `secret` at `now` with `nonce` (kNonceBytes random bytes).
peer::PeerEnvelope SignPeerRequest(absl::string_view request, absl::string_view secret,
                                   Ipv4Address to, uint16_t data_port, absl::string_view node,
                                   absl::Time now, absl::string_view nonce);

// Why a request was refused, as rocenet_diag_peer_refused_total{reason}.
enum class Refusal { kRateLimited, kUnauthenticated, kBadMac, kStale, kReplayed, kMalformed };
const char* RefusalName(Refusal refusal);

class PeerGate {
 public:
  struct Admitted {
    // The request's bytes, as signed (the data port's wire parses them;
    // one that does not parse is counted kMalformed there).
    std::string request;
    std::string node;  // as the sender named itself
  };

  // Admits or refuses the envelope that `source` sent to `local`:`data_port`
  // at `now`, checked with `secret`. Counts every refusal.
  absl::StatusOr<Admitted> Admit(const peer::PeerEnvelope& envelope, absl::string_view secret,
                                 Ipv4Address source, Ipv4Address local, uint16_t data_port,
                                 absl::Time now);
  // Counts a refusal decided elsewhere (a frame that did not parse).
  void Count(Refusal refusal);

  // Refusals so far, by RefusalName.
  std::map<std::string, uint64_t> Refusals() const;

 private:
  struct Bucket {
    double tokens = kPeerRequestBurst;
    absl::Time last;
  };
  absl::Status Refuse(Refusal refusal, std::string message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Take(Ipv4Address source, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetOldNonces(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<Ipv4Address, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  // Nonces admitted within the skew window, oldest first, and as a set.
  std::deque<std::pair<absl::Time, std::string>> nonce_order_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> nonces_ ABSL_GUARDED_BY(mu_);
  std::map<Refusal, uint64_t> refused_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::diag
