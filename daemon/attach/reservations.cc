// SPDX-License-Identifier: Apache-2.0
#include "daemon/attach/reservations.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "nlohmann/json.hpp"

namespace rocenet::attach {
namespace {

using nlohmann::json;
constexpr int kReservationsVersion = 1;

json ReservationToJson(const Reservation& r) {
  return {{"owner_uid", r.owner_uid},
          {"owner", r.owner},
          {"pod_uids", r.pod_uids},
          {"port_ids", r.port_ids},
          {"created", r.created_unix}};
}

absl::StatusOr<Reservation> ReservationFromJson(const json& in) {
  Reservation r;
  r.owner_uid = in.at("owner_uid").get<std::string>();
  r.owner = in.value("owner", "");
  r.pod_uids = in.value("pod_uids", std::vector<std::string>{});
  r.port_ids = in.at("port_ids").get<std::vector<std::string>>();
  r.created_unix = in.value("created", int64_t{0});
  if (r.owner_uid.empty()) return absl::InvalidArgumentError("a reservation has no owner_uid");
  if (r.port_ids.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(HolderName(r), " holds no port"));
  }
  return r;
}

}  // namespace

std::string HolderName(const Reservation& reservation) {
  if (reservation.owner.empty()) return absl::StrCat("owner uid ", reservation.owner_uid);
  return absl::StrCat("owner ", reservation.owner, " (uid ", reservation.owner_uid, ")");
}

std::string SerializeReservations(const std::vector<Reservation>& reservations) {
  json list = json::array();
  for (const Reservation& r : reservations) list.push_back(ReservationToJson(r));
  return json{{"version", kReservationsVersion}, {"reservations", list}}.dump(
             2, ' ', false, json::error_handler_t::replace) +
         "\n";
}

absl::StatusOr<std::vector<Reservation>> ParseReservations(absl::string_view text) {
  std::vector<Reservation> out;
  try {
    const json root = json::parse(text.begin(), text.end());
    if (root.value("version", 0) != kReservationsVersion) {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported format version ", root.value("version", 0)));
    }
    for (const json& entry : root.at("reservations")) {
      ASSIGN_OR_RETURN(Reservation reservation, ReservationFromJson(entry));
      out.push_back(std::move(reservation));
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid: ", e.what()));
  }
  // What the lookups rely on: one reservation per owner, one owner per port.
  // A file that breaks either was not written by rocenetd; guessing which
  // entry wins could hand a port to the wrong pod.
  std::set<std::string> owners;
  std::set<std::string> ports;
  for (const Reservation& r : out) {
    if (!owners.insert(r.owner_uid).second) {
      return absl::InvalidArgumentError(absl::StrCat(HolderName(r), " is listed twice"));
    }
    for (const std::string& port_id : r.port_ids) {
      if (!ports.insert(port_id).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("port ", port_id, " is reserved twice (", HolderName(r), ")"));
      }
    }
  }
  return out;
}

absl::Status ReservationStore::Load() {
  absl::StatusOr<std::string> text = fs_->ReadFile(path_);
  if (absl::IsNotFound(text.status())) return absl::OkStatus();
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<Reservation>> reservations = ParseReservations(*text);
  if (!reservations.ok()) {
    return absl::DataLossError(absl::StrCat(path_, ": ", reservations.status().message()));
  }
  reservations_ = std::move(*reservations);
  return absl::OkStatus();
}

absl::Status ReservationStore::Save(const std::vector<Reservation>& reservations) {
  return fs_->WriteFileAtomic(path_, SerializeReservations(reservations), 0600);
}

absl::Status ReservationStore::Put(const Reservation& reservation) {
  std::vector<Reservation> next = reservations_;
  auto it = std::find_if(next.begin(), next.end(), [&](const Reservation& r) {
    return r.owner_uid == reservation.owner_uid;
  });
  if (it != next.end()) {
    *it = reservation;
  } else {
    next.push_back(reservation);
  }
  RETURN_IF_ERROR(Save(next));
  reservations_ = std::move(next);
  return absl::OkStatus();
}

absl::Status ReservationStore::Erase(const std::string& owner_uid) {
  std::vector<Reservation> next = reservations_;
  const auto removed =
      std::erase_if(next, [&](const Reservation& r) { return r.owner_uid == owner_uid; });
  if (removed == 0) return absl::OkStatus();
  RETURN_IF_ERROR(Save(next));
  reservations_ = std::move(next);
  return absl::OkStatus();
}

const Reservation* ReservationStore::Find(const std::string& owner_uid) const {
  for (const Reservation& r : reservations_) {
    if (r.owner_uid == owner_uid) return &r;
  }
  return nullptr;
}

const Reservation* ReservationStore::FindByPort(const std::string& port_id) const {
  for (const Reservation& r : reservations_) {
    if (std::find(r.port_ids.begin(), r.port_ids.end(), port_id) != r.port_ids.end()) return &r;
  }
  return nullptr;
}

std::vector<const Reservation*> ReservationStore::ForPod(const std::string& pod_uid) const {
  std::vector<const Reservation*> out;
  for (const Reservation& r : reservations_) {
    if (std::find(r.pod_uids.begin(), r.pod_uids.end(), pod_uid) != r.pod_uids.end()) {
      out.push_back(&r);
    }
  }
  return out;
}

}  // namespace rocenet::attach
