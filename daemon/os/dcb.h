// SPDX-License-Identifier: Apache-2.0
// Dcb: a net device's Data Center Bridging settings, as dcbnl (rtnetlink
// RTM_GETDCB / RTM_SETDCB, what lldpad and iproute2's `dcb` use) shows and
// changes them. Only IEEE 802.1Qbb Priority-based Flow Control, in the
// host-managed IEEE DCBX mode: rocenet sets PFC itself, no DCBX agent runs.
//
// Bound to the network namespace it was opened in; used on the event loop
// thread. Errors name the device and the reason:
//   - Unimplemented: the device has no DCB support (no dcbnl operations, as
//     veth and many NICs) or no IEEE PFC;
//   - NotFound: no such device;
//   - InvalidArgument: the driver refused the setting (hbl_en takes only
//     none or all of its four priorities).
#pragma once

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

// IEEE 802.1Q priorities (and traffic classes): 0..7.
inline constexpr int kPfcPriorities = 8;

// A device's PFC (the kernel's struct ieee_pfc).
struct PfcSettings {
  // How many traffic classes may have PFC at once (pfc_cap).
  uint8_t capability = 0;
  // Bit n set: PFC on for priority n (pfc_en).
  uint8_t enabled = 0;
  // PFC frames sent (the port asked its peer to pause) and received (the
  // peer asked the port to pause), per priority, as the driver counts them;
  // zero when it does not.
  std::array<uint64_t, kPfcPriorities> requests{};
  std::array<uint64_t, kPfcPriorities> indications{};

  friend bool operator==(const PfcSettings&, const PfcSettings&) = default;
};

class Dcb {
 public:
  virtual ~Dcb() = default;

  virtual absl::StatusOr<PfcSettings> GetPfc(absl::string_view ifname) = 0;

  // Puts the device in host-managed IEEE DCBX mode where it reports another
  // one, then sets PFC on the priorities in `enabled`; the rest of its PFC
  // settings stay. A driver without IEEE PFC setting is Unimplemented.
  virtual absl::Status SetPfc(absl::string_view ifname, uint8_t enabled) = 0;
};

}  // namespace rocenet::os
