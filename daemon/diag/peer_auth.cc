// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/peer_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace rocenet::diag {
namespace {

constexpr absl::string_view kDomain("rocenet-peer-v1\0", 16);
// Peers remembered for the rate limit; past this the quietest go.
constexpr size_t kMaxBuckets = 4096;
// Nonces remembered; a flood past this within the window is refused as
// replayed rather than growing the set without bound.
constexpr size_t kMaxNonces = 1 << 16;

void AppendBigEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::string Mac(absl::string_view secret, Ipv4Address to, uint16_t data_port, int64_t unix_ms,
                absl::string_view nonce, absl::string_view request) {
  std::string message(kDomain);
  AppendBigEndian(message, to.value(), 4);
  AppendBigEndian(message, data_port, 2);
  AppendBigEndian(message, static_cast<uint64_t>(unix_ms), 8);
  absl::StrAppend(&message, nonce, request);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  return std::string(reinterpret_cast<const char*>(mac), length);
}

}  // namespace

absl::StatusOr<std::string> ParseSecret(absl::string_view contents, absl::string_view origin) {
  const absl::string_view secret = absl::StripAsciiWhitespace(contents);
  if (secret.size() < kMinSecretBytes) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": the shared secret has ",
                                                   secret.size(), " bytes; at least ",
                                                   kMinSecretBytes, " are needed"));
  }
  return std::string(secret);
}

peer::PeerEnvelope SignPeerRequest(absl::string_view request, absl::string_view secret,
                                   Ipv4Address to, uint16_t data_port, absl::string_view node,
                                   absl::Time now, absl::string_view nonce) {
  peer::PeerEnvelope envelope;
  envelope.request = std::string(request);
  peer::PeerAuth* auth = &envelope.auth;
  auth->node = std::string(node);
  auth->unix_ms = absl::ToUnixMillis(now);
  auth->nonce = std::string(nonce);
  auth->mac = Mac(secret, to, data_port, auth->unix_ms, nonce, envelope.request);
  return envelope;
}

const char* RefusalName(Refusal refusal) {
  switch (refusal) {
    case Refusal::kRateLimited:
      return "rate_limited";
    case Refusal::kUnauthenticated:
      return "unauthenticated";
    case Refusal::kBadMac:
      return "bad_mac";
    case Refusal::kStale:
      return "stale";
    case Refusal::kReplayed:
      return "replayed";
    case Refusal::kMalformed:
      return "malformed";
  }
  return "unknown";
}

absl::StatusOr<PeerGate::Admitted> PeerGate::Admit(const peer::PeerEnvelope& envelope,
                                                   absl::string_view secret, Ipv4Address source,
                                                   Ipv4Address local, uint16_t data_port,
                                                   absl::Time now) {
  absl::MutexLock lock(&mu_);
  const std::string peer = source.ToString();
  // The rate first: a flood costs one map look-up per connection, no HMAC.
  if (!Take(source, now)) {
    return Refuse(Refusal::kRateLimited,
                  absl::StrCat("peer ", peer, ": more than ", kPeerRequestBurst,
                               " requests at once or ", kPeerRequestsPerSecond, " a second"));
  }
  if (envelope.auth.mac.empty()) {
    return Refuse(Refusal::kUnauthenticated, absl::StrCat("peer ", peer, ": request not signed"));
  }
  const peer::PeerAuth& auth = envelope.auth;
  if (auth.nonce.size() != kNonceBytes) {
    return Refuse(Refusal::kUnauthenticated,
                  absl::StrCat("peer ", peer, ": nonce of ", auth.nonce.size(), " bytes"));
  }
  const std::string expected =
      Mac(secret, local, data_port, auth.unix_ms, auth.nonce, envelope.request);
  if (expected.size() != auth.mac.size() ||
      CRYPTO_memcmp(expected.data(), auth.mac.data(), expected.size()) != 0) {
    return Refuse(Refusal::kBadMac, absl::StrCat("peer ", peer,
                                                 ": the request's MAC does not match this "
                                                 "cluster's secret"));
  }
  const absl::Time signed_at = absl::FromUnixMillis(auth.unix_ms);
  if (signed_at < now - kAuthSkew || signed_at > now + kAuthSkew) {
    // The MAC holds: the sender has the secret, and either its clock or
    // this node's is off (or the request is a replay from long ago).
    const absl::Duration apart =
        absl::Seconds(std::llround(absl::ToDoubleSeconds(absl::AbsDuration(signed_at - now))));
    return Refuse(
        Refusal::kStale,
        absl::StrCat("peer ", peer, " (node ", auth.node, "): its request was signed ",
                     absl::FormatDuration(apart), signed_at > now ? " ahead of" : " behind",
                     " this node's clock, more than the ", absl::FormatDuration(kAuthSkew),
                     " allowed: the two nodes' clocks disagree (is NTP running on both?)"));
  }
  ForgetOldNonces(now);
  if (nonces_.contains(auth.nonce) || nonces_.size() >= kMaxNonces) {
    return Refuse(Refusal::kReplayed, absl::StrCat("peer ", peer, ": nonce seen before"));
  }
  Admitted admitted;
  admitted.request = envelope.request;
  nonces_.insert(auth.nonce);
  nonce_order_.emplace_back(signed_at, auth.nonce);
  admitted.node = auth.node;
  return admitted;
}

void PeerGate::Count(Refusal refusal) {
  absl::MutexLock lock(&mu_);
  ++refused_[refusal];
}

std::map<std::string, uint64_t> PeerGate::Refusals() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, uint64_t> out;
  for (const auto& [refusal, count] : refused_) out[RefusalName(refusal)] = count;
  return out;
}

absl::Status PeerGate::Refuse(Refusal refusal, std::string message) {
  ++refused_[refusal];
  if (refusal == Refusal::kRateLimited) return absl::ResourceExhaustedError(message);
  if (refusal == Refusal::kStale) return absl::FailedPreconditionError(message);
  return absl::UnauthenticatedError(message);
}

bool PeerGate::Take(Ipv4Address source, absl::Time now) {
  auto it = buckets_.find(source);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxBuckets) {
      auto idlest = std::min_element(buckets_.begin(), buckets_.end(), [](auto& a, auto& b) {
        return a.second.last < b.second.last;
      });
      buckets_.erase(idlest);
    }
    it = buckets_.emplace(source, Bucket{.tokens = kPeerRequestBurst, .last = now}).first;
  }
  Bucket& bucket = it->second;
  const double refill =
      std::max(0.0, absl::ToDoubleSeconds(now - bucket.last)) * kPeerRequestsPerSecond;
  bucket.tokens = std::min(kPeerRequestBurst, bucket.tokens + refill);
  bucket.last = std::max(bucket.last, now);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

void PeerGate::ForgetOldNonces(absl::Time now) {
  // A nonce older than the window can no longer pass the time check, so it
  // need not be remembered. Entries are in admission order; the signing
  // times inside the window may be out of order by up to twice the skew,
  // which only keeps a few a little longer.
  while (!nonce_order_.empty() && nonce_order_.front().first < now - 2 * kAuthSkew) {
    nonces_.erase(nonce_order_.front().second);
    nonce_order_.pop_front();
  }
}

}  // namespace rocenet::diag
