// SPDX-License-Identifier: Apache-2.0
// ReservationFiles: for every reservation with a Gaudi port, a directory of
// Habana HCL files (gaudinet.json, macAddrInfo.json) for exactly its ports,
// <hcl_dir>/claim-<owner uid>, with the content the device plugin writes
// for an allocation of the same ports (daemon/common/hcl_files.h). rocenet's
// DRA plugin mounts it into the claim's containers through CDI and keeps no
// state of its own, so rocenetd makes the files, keeps them current and
// removes them.
//
// The directory is made (0755, files 0644, each replaced by rename, so a
// container that mounted the directory reads the old content or the new,
// never a torn file) when the reservation is made, rewritten when the
// ports' addresses, MACs or gateway MACs change (Sync, after every change
// the event loop publishes), and removed on Release. The first Sync after
// start makes the directories of the reservations loaded from the state
// file right and removes claim-* directories no reservation holds; the
// device plugin's alloc-* directories beside them are never touched.
//
// Errors: Write returns the first failure, naming the file, and the caller
// undoes the reservation; Sync and Remove log failures and try again on the
// next Sync. An empty hcl_dir turns every file off.
//
// Ownership: the FileSystem is borrowed and must outlive this object.
// Thread-safety: none; used on the event loop thread only.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/addressing/plan.h"
#include "daemon/addressing/port_addressing.h"
#include "daemon/attach/reservations.h"
#include "daemon/common/hcl_files.h"
#include "daemon/common/removal.h"
#include "daemon/inventory/port.h"
#include "daemon/os/filesystem.h"

namespace rocenet::attach {

inline constexpr char kDefaultHclDir[] = "/run/rocenet/hcl";
inline constexpr char kClaimDirectoryPrefix[] = "claim-";

// InvalidArgument unless `owner_uid` may name a directory: a Kubernetes UID
// is a UUID, so hex digits and '-' only, at most 64 of them. Anything else
// ("..", "/") could reach outside hcl_dir.
absl::Status ValidateOwnerUid(const std::string& owner_uid);

// The node's ports as HCL's files see them, spelled as rocenetd's API
// spells them (what the device plugin builds its files from): a ready
// plan's address and gateway MAC, none for any other plan.
std::vector<HclPort> HclPortsOf(const std::vector<inventory::Port>& ports,
                                const std::vector<addressing::PortAddressing>& addressing,
                                addressing::Mode mode);

class ReservationFiles {
 public:
  // `hcl_dir` empty: no files.
  ReservationFiles(os::FileSystem* fs, std::string hcl_dir)
      : fs_(fs), hcl_dir_(std::move(hcl_dir)) {}

  bool enabled() const { return !hcl_dir_.empty(); }

  // Takes `ports` (HclPortsOf) as the ports are now and makes every
  // reservation's directory match them; the first call also removes the
  // claim-* directories of no reservation. The number of files written or
  // removed.
  int Sync(std::vector<HclPort> ports, const std::vector<Reservation>& reservations);

  // Makes the reservation's directory match the ports of the last Sync:
  // its path and files, or an empty HclDirectory when none of its ports is
  // a Gaudi port (any directory it had goes). The first error, naming the
  // file; what was written stays, for the caller to Remove.
  absl::StatusOr<HclDirectory> Write(const Reservation& reservation);

  // Removes the owner's directory and everything in it; a failure is logged
  // and tried again on the next Sync.
  void Remove(const std::string& owner_uid);

  // The owner's directory as last written; empty when it has none.
  HclDirectory Find(const std::string& owner_uid) const;

  // rocenet leaving the node: removes every claim-* directory in hcl_dir,
  // held or not, and reports each (alloc-* and anything else stay). A
  // failure keeps its directory with the error. Call Sync no more
  // afterwards: it would write the held ones again.
  RemovalReport RemoveAll();

 private:
  struct Written {
    std::map<std::string, std::string> files;  // name -> content on disk
    bool directory = false;                    // the directory was made
    // The files on disk are known: until then each is read before it is
    // written, so a restart rewrites only what is stale.
    bool known = false;
  };

  std::string DirectoryOf(const std::string& owner_uid) const;
  // The number of files written or removed.
  absl::StatusOr<int> Apply(const Reservation& reservation, Written& written);
  absl::Status RemoveTree(const std::string& dir);
  void RetryRemovals();
  void SweepOrphans(const std::set<std::string>& live);

  os::FileSystem* fs_;
  const std::string hcl_dir_;
  std::vector<HclPort> ports_;
  std::map<std::string, Written> written_;  // by owner uid
  // Directories a Remove could not take away yet.
  std::set<std::string> to_remove_;
  bool swept_ = false;
};

}  // namespace rocenet::attach
