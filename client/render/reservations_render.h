// SPDX-License-Identifier: Apache-2.0
// Reservations (ports set aside for a DRA claim's pods) as a table:
// `rocectl reservations`.
//
// Pure, no I/O, thread-safe. Ages are measured against the `now` passed in.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "rocenet/v1/reservations.pb.h"

namespace rocenet::rocectl {

// OWNER (namespace/name) OWNER UID PODS (uids) PORTS (ids, in the order
// pods take them) AGE. "No ports are reserved." when there are none.
std::string RenderReservations(const v1::ListReservationsResponse& response, absl::Time now);

}  // namespace rocenet::rocectl
