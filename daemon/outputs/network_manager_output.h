// SPDX-License-Identifier: Apache-2.0
// NetworkManagerOutput: keeps NetworkManager off rocenet's ports, through
// NetworkManager's own interfaces (docs/rocenetd.md#networkmanager).
//
// Two steps, both needed (measured against NetworkManager 1.42):
//  - a configuration drop-in with a [device-rocenet] section, managed=0 for
//    every port by name, which NetworkManager reads when it starts and on a
//    reload: a port that appears later comes up unmanaged;
//  - over D-Bus, a reload of its configuration (else a port that appears
//    before NetworkManager's next start is still taken) and Managed=false on
//    each port it manages now: the reload alone leaves a device it already
//    has as it is, with its connection active.
// The drop-in is written when the set of ports changes, only when its
// content differs from the file on disk; NetworkManager is told after each
// change and once after rocenetd starts. A host without NetworkManager is
// normal: one line at info, and the next change tries again.
//
// The file stays when rocenetd stops, also cleanly: the ports keep their
// configuration then, and a NetworkManager reloaded or restarted in the gap
// of a rollout must not take them. Uninstalling removes it
// (docs/deploying.md#upgrade-and-uninstall).
//
// Ownership: the FileSystem and the client are borrowed and must outlive
// this object. Thread-safety: none; the daemon's loop thread calls it.
// Errors: Update() appends each failure, naming the file or the port's
// device, and goes on with the rest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/os/filesystem.h"
#include "daemon/os/network_manager.h"
#include "daemon/outputs/host_outputs.h"

namespace rocenet::outputs {

class NetworkManagerOutput {
 public:
  // `path`: the drop-in, absolute. `client` may be null: the file only.
  NetworkManagerOutput(os::FileSystem* fs, os::NetworkManagerClient* client, std::string path);

  // Makes the drop-in list the names of `ports` (every port rocenet manages,
  // present or not: one that appears later is covered from the start), or
  // removes it when there are none; a name NetworkManager cannot read
  // literally is left out and reported.
  void Update(const std::vector<PortOutput>& ports, std::vector<absl::Status>& errors);

  // rocenet leaving the node: after the drop-in was removed, NetworkManager
  // reads its configuration again, so a port that appears from now on is
  // its own again (the ports it holds unmanaged now stay so until their
  // devices are made again or the node restarts: taking them back at once
  // would have it configure ports rocenet has just emptied). No
  // NetworkManager is no error.
  absl::Status Forget();

 private:
  // Reload, then Managed=false on each of `names` that NetworkManager
  // manages.
  void Tell(const std::vector<std::string>& names, std::vector<absl::Status>& errors);

  os::FileSystem* fs_;
  os::NetworkManagerClient* client_;
  std::string path_;
  // The content NetworkManager was last told about ("" with no file);
  // unset until the first Update of this run.
  std::optional<std::string> told_;
  // Whether "no NetworkManager" was logged and has not been seen since.
  bool absence_logged_ = false;
};

}  // namespace rocenet::outputs
