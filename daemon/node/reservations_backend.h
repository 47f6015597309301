// SPDX-License-Identifier: Apache-2.0
// ReservationsBackend: what the Reservations gRPC service calls; the
// composition root implements it by running each call on the event loop,
// where AttachManager keeps the reservations beside the attachments they
// steer. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/attach/manager.h"
#include "daemon/attach/reservations.h"

namespace rocenet::node {

class ReservationsBackend {
 public:
  virtual ~ReservationsBackend() = default;
  // See AttachManager::Reserve, ReleaseReservation and Reservations.
  virtual absl::StatusOr<attach::Reservation> Reserve(const attach::ReserveRequest& request) = 0;
  virtual absl::StatusOr<std::optional<attach::Reservation>> ReleaseReservation(
      const std::string& owner_uid) = 0;
  virtual absl::StatusOr<std::vector<attach::Reservation>> ListReservations() = 0;
};

}  // namespace rocenet::node
