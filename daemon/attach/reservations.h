// SPDX-License-Identifier: Apache-2.0
// ReservationStore: the ports set aside for the pods of one owner (a DRA
// ResourceClaim), kept in <state dir>/reservations.json.
//
// A reservation is made when kubelet prepares a claim and undone when it
// unprepares it, possibly long before and after the pods' CNI calls, and
// kubelet does not prepare a claim again because rocenetd restarted: the
// file is the only record of them. So, like the attachment Journal, each
// Put/Erase replaces the file atomically (temp file, fsync, rename) before it
// returns, a failed write changes nothing in memory either, and a file that
// cannot be read is DataLoss at Load() (the daemon then does not start rather
// than hand reserved ports to anyone). The semantics of reserving (who may
// hold what) live in AttachManager, which sees the attachments too; this is
// storage and lookups only.
//
// Used on the event loop thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/os/filesystem.h"

namespace rocenet::attach {

// Where a reservation's HCL files are on the host (reservation_files.h).
// Value type.
struct HclDirectory {
  std::string path;                // empty: the reservation has none
  std::vector<std::string> files;  // the names of the files in it, sorted

  friend bool operator==(const HclDirectory&, const HclDirectory&) = default;
};

// Value type, thread-compatible.
struct Reservation {
  std::string owner_uid;  // unique: the ResourceClaim's UID
  std::string owner;      // "namespace/name", for people
  // The pods whose Attach without a device id takes these ports.
  std::vector<std::string> pod_uids;
  // In the order given: a pod takes the first one not attached yet.
  std::vector<std::string> port_ids;
  int64_t created_unix = 0;
  // Not kept in the file: the files follow the ports and are made again at
  // start, so AttachManager fills this in from ReservationFiles when it
  // answers.
  HclDirectory hcl;

  friend bool operator==(const Reservation&, const Reservation&) = default;
};

// "owner training/job-0 (uid 8c1d...)", or "owner uid 8c1d..." without a
// name: how every message names a reservation's holder.
std::string HolderName(const Reservation& reservation);

class ReservationStore {
 public:
  // `fs` must outlive the store.
  ReservationStore(os::FileSystem* fs, std::string path) : fs_(fs), path_(std::move(path)) {}

  // Reads the file; a missing file is no reservations. A file that is not
  // valid (including one with an owner twice or a port in two
  // reservations) is DataLoss naming the path, and what was loaded stays.
  absl::Status Load();

  // Adds `reservation`, or replaces the one of the same owner in place (its
  // position, and so the order pods take ports in, stays).
  absl::Status Put(const Reservation& reservation);
  // Forgets the owner's reservation; an unknown owner writes nothing.
  absl::Status Erase(const std::string& owner_uid);

  const Reservation* Find(const std::string& owner_uid) const;
  const Reservation* FindByPort(const std::string& port_id) const;
  // The reservations that list `pod_uid`, oldest first.
  std::vector<const Reservation*> ForPod(const std::string& pod_uid) const;
  // Oldest first.
  const std::vector<Reservation>& All() const { return reservations_; }

 private:
  absl::Status Save(const std::vector<Reservation>& reservations);

  os::FileSystem* fs_;
  std::string path_;
  std::vector<Reservation> reservations_;
};

std::string SerializeReservations(const std::vector<Reservation>& reservations);
// Also checks what Load() relies on: owners and ports unique, none empty.
absl::StatusOr<std::vector<Reservation>> ParseReservations(absl::string_view text);

}  // namespace rocenet::attach
