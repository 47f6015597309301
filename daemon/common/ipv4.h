// SPDX-License-Identifier: Apache-2.0
// Ipv4Address and Ipv4Prefix: IPv4 value types for plans, routes and config.
//
// Both are small immutable values: copyable, comparable, thread-compatible,
// with no I/O. The addresses come from switches (LLDP Port Description) and
// from operators (config), so Parse() is strict in the way inet_pton(AF_INET)
// is and never guesses: "010.1.1.1" could be read as octal 8 or decimal 10 by
// different tools, so it is refused rather than read either way.
//
// Errors are InvalidArgument statuses whose message quotes the text (escaped,
// so any input bytes are safe to log) and says what is wrong, e.g.
//   "10.200.1.02/30": octet "02" has a leading zero
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet {

class Ipv4Address {
 public:
  Ipv4Address() = default;  // 0.0.0.0
  // From the address in host byte order, e.g. 0x0a000001 is 10.0.0.1.
  constexpr explicit Ipv4Address(uint32_t host_order) : value_(host_order) {}

  // Dotted quad only: exactly four decimal octets 0..255, no leading zeros,
  // no signs, no spaces, nothing before or after.
  static absl::StatusOr<Ipv4Address> Parse(absl::string_view text);
  // From four bytes in network order (as in a packet or a netlink attribute).
  static Ipv4Address FromNetworkBytes(const uint8_t bytes[4]);

  constexpr uint32_t value() const { return value_; }
  std::array<uint8_t, 4> NetworkBytes() const;
  std::string ToString() const;

  friend bool operator==(const Ipv4Address&, const Ipv4Address&) = default;
  friend auto operator<=>(const Ipv4Address&, const Ipv4Address&) = default;

 private:
  uint32_t value_ = 0;
};

// An address with a prefix length. The address keeps its host bits, so the
// same type holds an interface address ("10.200.1.1/30") and, after
// Network(), the subnet it sits in ("10.200.1.0/30").
class Ipv4Prefix {
 public:
  Ipv4Prefix() = default;  // 0.0.0.0/0
  // `length` must be 0..32; the process aborts otherwise, as for any broken
  // invariant. Use Make() or Parse() for lengths that come from input.
  Ipv4Prefix(Ipv4Address address, int length);

  static absl::StatusOr<Ipv4Prefix> Make(Ipv4Address address, int length);
  // "a.b.c.d/n": the address as Ipv4Address::Parse() takes it, then a decimal
  // length 0..32 with no sign and no leading zero ("/030" is refused).
  static absl::StatusOr<Ipv4Prefix> Parse(absl::string_view text);

  Ipv4Address address() const { return address_; }
  int length() const { return length_; }

  Ipv4Address Netmask() const;
  // The same prefix with the host bits cleared.
  Ipv4Prefix Network() const;
  // The all-ones host address; for /31 and /32 just the highest address.
  Ipv4Address Broadcast() const;
  bool IsNetwork() const { return Network() == *this; }

  bool Contains(Ipv4Address a) const;
  // True when the two address ranges share at least one address.
  bool Overlaps(const Ipv4Prefix& other) const;

  std::string ToString() const;  // "10.200.1.1/30"

  friend bool operator==(const Ipv4Prefix&, const Ipv4Prefix&) = default;
  friend auto operator<=>(const Ipv4Prefix&, const Ipv4Prefix&) = default;

 private:
  Ipv4Address address_;
  int length_ = 0;
};

}  // namespace rocenet
