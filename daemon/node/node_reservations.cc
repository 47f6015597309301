// SPDX-License-Identifier: Apache-2.0
// Node: the reservation calls, each run on the event loop, where the
// attachments they are checked against and the ports' inventory are.
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/node/node.h"

namespace rocenet::node {
namespace {

absl::Status NoReservations() {
  return absl::UnimplementedError(
      "attachments, and so reservations, are not enabled on this "
      "rocenetd");
}

}  // namespace

absl::StatusOr<attach::Reservation> Node::Reserve(const attach::ReserveRequest& request) {
  if (parts_.attach == nullptr) return NoReservations();
  return Serve<attach::Reservation>([this, request]() -> absl::StatusOr<attach::Reservation> {
    RETURN_IF_ERROR(
        CheckManaging(absl::StrCat("reserve for ", request.owner, ": no port is reserved")));
    absl::StatusOr<attach::Reservation> reserved =
        parts_.attach->Reserve(request, Candidates(), absl::ToUnixSeconds(parts_.loop->Now()));
    // The snapshot counts the reserved ports: readers see the new count.
    if (reserved.ok()) Refresh(/*changed=*/true, /*replan=*/false);
    return reserved;
  });
}

absl::StatusOr<std::optional<attach::Reservation>> Node::ReleaseReservation(
    const std::string& owner_uid) {
  if (parts_.attach == nullptr) return NoReservations();
  return Serve<std::optional<attach::Reservation>>(
      [this, owner_uid]() -> absl::StatusOr<std::optional<attach::Reservation>> {
        absl::StatusOr<std::optional<attach::Reservation>> released =
            parts_.attach->ReleaseReservation(owner_uid);
        if (released.ok() && released->has_value()) Refresh(/*changed=*/true, /*replan=*/false);
        return released;
      });
}

absl::StatusOr<std::vector<attach::Reservation>> Node::ListReservations() {
  if (parts_.attach == nullptr) return NoReservations();
  return Serve<std::vector<attach::Reservation>>(
      [this]() -> absl::StatusOr<std::vector<attach::Reservation>> {
        return parts_.attach->Reservations();
      });
}

}  // namespace rocenet::node
