// SPDX-License-Identifier: Apache-2.0
#include "client/render/reservations_render.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "client/render/health_render.h"
#include "client/render/table.h"

namespace rocenet::rocectl {

std::string RenderReservations(const v1::ListReservationsResponse& response, absl::Time now) {
  if (response.reservations().empty()) return "No ports are reserved.\n";
  TextTable table({"OWNER", "OWNER UID", "PODS", "PORTS", "AGE"});
  for (const v1::Reservation& reservation : response.reservations()) {
    table.AddRow({OrDash(reservation.owner()), OrDash(reservation.owner_uid()),
                  OrDash(absl::StrJoin(reservation.pod_uids(), ",")),
                  OrDash(absl::StrJoin(reservation.port_ids(), ",")),
                  FormatSince(reservation.created(), now)});
  }
  return table.Render();
}

}  // namespace rocenet::rocectl
