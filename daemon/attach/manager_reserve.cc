// SPDX-License-Identifier: Apache-2.0
// AttachManager, reservations: setting ports aside for a DRA claim's pods
// before their CNI calls, and releasing them. Choose (manager_choose.cc) follows
// what is reserved here.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/attach/manager.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_context.h"
#include "daemon/common/status_macros.h"

namespace rocenet::attach {
namespace {

// A claim is reserved for at most 256 consumers (Kubernetes'
// ResourceClaimReservedForMaxSize); more is not a claim's list.
constexpr size_t kMaxPods = 256;

absl::Status ReserveInvalid(const ReserveRequest& request, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("reserve for owner uid ", request.owner_uid, ": ", why));
}

absl::Status ValidateReserve(const ReserveRequest& request) {
  if (request.owner_uid.empty()) return absl::InvalidArgumentError("reserve: owner_uid is empty");
  if (request.port_ids.empty()) return ReserveInvalid(request, "no port ids");
  if (request.pod_uids.size() > kMaxPods) {
    return ReserveInvalid(request,
                          absl::StrCat(request.pod_uids.size(), " pod uids, more than ", kMaxPods));
  }
  std::set<std::string> seen;
  for (const std::string& port_id : request.port_ids) {
    if (port_id.empty()) return ReserveInvalid(request, "an empty port id");
    if (!seen.insert(port_id).second) {
      return ReserveInvalid(request, absl::StrCat("port id ", port_id, " is listed twice"));
    }
  }
  for (const std::string& pod_uid : request.pod_uids) {
    if (pod_uid.empty()) return ReserveInvalid(request, "an empty pod uid");
  }
  return absl::OkStatus();
}

std::string AttachedPodName(const AttachmentRecord& record) {
  return absl::StrCat("pod ",
                      record.pod.name.empty() ? std::string("(unnamed)")
                                              : absl::StrCat(record.pod.ns, "/", record.pod.name),
                      " (uid ", record.pod.uid.empty() ? std::string("not given") : record.pod.uid,
                      ", container ", record.container_id, ", ", record.ifname, ")");
}

}  // namespace

absl::StatusOr<Reservation> AttachManager::Reserve(const ReserveRequest& request,
                                                   const std::vector<PortCandidate>& ports,
                                                   int64_t now_unix) {
  if (reservations_ == nullptr) {
    return absl::FailedPreconditionError("reservations are not kept by this rocenetd");
  }
  RETURN_IF_ERROR(ValidateReserve(request));
  const bool with_files = hcl_files_ != nullptr && hcl_files_->enabled();
  // The uid names the claim's HCL directory: no path of the caller's.
  if (with_files) RETURN_IF_ERROR(ValidateOwnerUid(request.owner_uid));
  auto find = [&](const std::string& port_id) {
    return std::find_if(ports.begin(), ports.end(),
                        [&](const PortCandidate& port) { return port.port_id == port_id; });
  };
  // "port <id> (<interface>)", for each requested port, which must be the
  // node's.
  std::vector<std::string> names;
  for (const std::string& port_id : request.port_ids) {
    const auto it = find(port_id);
    if (it == ports.end()) {
      return absl::NotFoundError(absl::StrCat("reserve for owner uid ", request.owner_uid,
                                              ": port id \"", port_id,
                                              "\" is not a port of this node"));
    }
    names.push_back(absl::StrCat("port ", port_id, " (", it->host_ifname, ")"));
  }
  const Reservation* existing = reservations_->Find(request.owner_uid);
  if (existing != nullptr) {
    std::vector<std::string> had = existing->port_ids;
    std::vector<std::string> asked = request.port_ids;
    std::sort(had.begin(), had.end());
    std::sort(asked.begin(), asked.end());
    // A claim's allocation does not change while it is prepared: other
    // ports for the same owner are a mistake to show, not to follow.
    if (had != asked) {
      std::vector<std::string> held;
      for (const std::string& port_id : existing->port_ids) {
        const auto it = find(port_id);
        held.push_back(it == ports.end() ? port_id
                                         : absl::StrCat(port_id, " (", it->host_ifname, ")"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          HolderName(*existing), " already holds other ports: ", absl::StrJoin(held, ", "),
          "; release them first"));
    }
  }
  for (size_t i = 0; i < request.port_ids.size(); ++i) {
    const std::string& port_id = request.port_ids[i];
    if (const Reservation* holder = reservations_->FindByPort(port_id);
        holder != nullptr && holder->owner_uid != request.owner_uid) {
      return absl::FailedPreconditionError(
          absl::StrCat(names[i], " is reserved by ", HolderName(*holder)));
    }
    // A port a pod of the claim already has (a repeated prepare after its
    // CNI ADD) is the claim's; any other pod's is not free.
    if (const AttachmentRecord* attached = journal_->FindByPort(port_id); attached != nullptr) {
      const std::vector<std::string>& pods = request.pod_uids;
      if (attached->pod.uid.empty() ||
          std::find(pods.begin(), pods.end(), attached->pod.uid) == pods.end()) {
        return absl::FailedPreconditionError(
            absl::StrCat(names[i], " is attached to ", AttachedPodName(*attached)));
      }
    }
  }
  Reservation reservation;
  if (existing != nullptr) {
    reservation = *existing;
    if (reservation.pod_uids == request.pod_uids) {
      if (with_files) reservation.hcl = hcl_files_->Find(reservation.owner_uid);
      return reservation;
    }
    reservation.pod_uids = request.pod_uids;
  } else {
    reservation.owner_uid = request.owner_uid;
    reservation.owner = request.owner;
    reservation.pod_uids = request.pod_uids;
    reservation.port_ids = request.port_ids;
    reservation.created_unix = now_unix;
  }
  // The files before the record: a claim whose containers would find no
  // HCL files is not prepared, and kubelet asks again.
  HclDirectory hcl;
  if (with_files) {
    absl::StatusOr<HclDirectory> written = hcl_files_->Write(reservation);
    if (!written.ok()) {
      if (existing == nullptr) hcl_files_->Remove(reservation.owner_uid);
      return WithContext(written.status(),
                         absl::StrCat("write the HCL files of ", HolderName(reservation)));
    }
    hcl = *std::move(written);
  }
  if (absl::Status put = reservations_->Put(reservation); !put.ok()) {
    if (with_files && existing == nullptr) hcl_files_->Remove(reservation.owner_uid);
    return WithContext(put, "record the reservation");
  }
  reservation.hcl = std::move(hcl);
  SPDLOG_INFO("{} {} for {}, for pods {}", existing == nullptr ? "reserved" : "still reserved",
              absl::StrJoin(names, ", "), HolderName(reservation),
              reservation.pod_uids.empty() ? std::string("(none yet)")
                                           : absl::StrJoin(reservation.pod_uids, ", "));
  return reservation;
}

absl::StatusOr<std::optional<Reservation>> AttachManager::ReleaseReservation(
    const std::string& owner_uid) {
  if (owner_uid.empty()) return absl::InvalidArgumentError("release: owner_uid is empty");
  if (reservations_ == nullptr) return std::optional<Reservation>();
  const Reservation* found = reservations_->Find(owner_uid);
  if (found == nullptr) return std::optional<Reservation>();
  const Reservation copy = *found;
  RETURN_IF_ERROR(WithContext(reservations_->Erase(owner_uid), "forget the reservation"));
  // After the record: files a failed Erase removed would leave a claim
  // still prepared without them.
  if (hcl_files_ != nullptr) hcl_files_->Remove(owner_uid);
  SPDLOG_INFO("released ports {} of {}", absl::StrJoin(copy.port_ids, ", "), HolderName(copy));
  return std::optional<Reservation>(copy);
}

std::vector<Reservation> AttachManager::Reservations() const {
  if (reservations_ == nullptr) return {};
  std::vector<Reservation> out = reservations_->All();
  if (hcl_files_ != nullptr) {
    for (Reservation& reservation : out) reservation.hcl = hcl_files_->Find(reservation.owner_uid);
  }
  return out;
}

}  // namespace rocenet::attach
