// AllocationFiles: the host files of the allocations the plugin handed out
// (Multus device-info files, each allocation's HCL directory), kept current
// while the allocation lives and removed when it ends.
//
// An allocation ends when kubelet gives one of its ports to another
// container (Track of a newer one), when kubelet no longer assigns its
// ports to any container (Retain, from the PodResources API), and, for
// every allocation, when the plugin stops (RemoveAll): the device-info
// spec wants a plugin's files gone with it. Not on the pod's CNI DEL: a
// container restarted in the same pod is given the same mounts again, from
// kubelet's record of the allocation, without a new Allocate.
//
// Thread-safe: Allocate (gRPC threads) tracks, the refresher thread
// refreshes and retains. File errors are logged, never returned: a file
// that could not be rewritten is tried again on the next refresh.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "plugins/device/allocate.h"
#include "plugins/device/port_info.h"

namespace rocenet::device {

class AllocationFiles {
 public:
  // `allocation`'s files are on disk. An older allocation sharing a port
  // with it has ended: its files go.
  void Track(const ContainerAllocation& allocation, absl::Time now);

  // Rewrites the HCL files whose content `ports` changes (an address that
  // moved, a port that lost or got one); the number of files rewritten or
  // removed.
  int Refresh(const PortMap& ports);

  // Ends the allocations older than `grace` whose ports are not all in
  // `assigned` (the device ids kubelet assigns to containers now); the
  // number ended. The grace covers the moment between Allocate and kubelet
  // recording the assignment.
  int Retain(const std::set<std::string>& assigned, absl::Time now, absl::Duration grace);

  // Removes every file of every allocation.
  void RemoveAll();

  // The tracked allocations' port ids (sorted within each), for tests.
  std::vector<std::vector<std::string>> Allocations() const;

 private:
  struct Entry {
    std::vector<std::string> ids;
    std::vector<std::string> devinfo_paths;
    std::string hcl_dir;
    std::map<std::string, std::string> hcl_files;  // path -> content written
    absl::Time since;
  };
  static void Remove(const Entry& entry);

  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::device
