// SPDX-License-Identifier: Apache-2.0
// HostOutputs: the files on the host that other programs read to learn what
// rocenet configured.
//
//   gaudinet.json      Habana HCL (HCL_GAUDINET_CONFIG_FILE) reads it when a
//                      training job starts: each scale-out port's MAC, IP,
//                      subnet mask and gateway MAC.
//   *.network          systemd-networkd, so the configuration of the ports
//                      also exists in the host's own network config.
//   NFD feature file   nfd-worker turns it into node labels, so the
//                      scheduler can pick nodes whose scale-out network is up.
//                      It carries an expiry, refreshed while rocenetd runs and
//                      removed on a clean stop, so a crashed or uninstalled
//                      rocenetd does not leave the label behind for long.
//   NetworkManager     a drop-in marking the ports unmanaged, and the same
//                      said over D-Bus (NetworkManagerOutput).
//   CNI plugin         rocenet's CNI plugin binary, as installed on the host
//                      (outputs.cni_plugin). Not written here (the install
//                      puts it there); only taken back by RemoveAll.
//
// Update() takes the full port list after every change and makes the files
// match it, writing only what differs on disk. Each output is optional (an
// empty path in OutputConfig turns it off).
//
// Ownership: the FileSystem and the NetworkManager client are borrowed and
// must outlive this object.
// Thread-safety: none; owned and called by the daemon's event-loop thread.
// Errors: Update() keeps going after a failure so that one broken output
// does not hold back the others; it returns the first error, naming its
// file, with the count of the rest. Files are never left half-written.
// RemoveAll() reports each output it took back or kept (with the error) in
// a RemovalReport and goes on after a failure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "daemon/common/removal.h"
#include "daemon/os/clock.h"
#include "daemon/os/filesystem.h"
#include "daemon/os/network_manager.h"

namespace rocenet::outputs {

// One managed port as the outputs need it. Plain strings keep this module
// independent of the addressing types; the event loop fills them in.
struct PortOutput {
  std::string name;          // interface name, e.g. "so0"
  std::string mac;           // "aa:bb:cc:dd:ee:ff"
  bool l3 = true;            // L3 port (addresses) vs L2 port
  bool gaudi = false;        // a Gaudi scale-out port (HCL's gaudinet.json)
  bool provisioned = false;  // its address and routes are applied
  bool up = false;           // administratively up with carrier
  std::string local_ip;      // "10.200.1.1" (when provisioned)
  int prefix_length = 0;     // 30
  std::string gateway_ip;    // "10.200.1.2"
  std::string gateway_mac;   // switch MAC from LLDP, "" when unknown
  uint32_t mtu = 0;          // 0 = leave the MTU alone
  // (destination "10.200.0.0/16", gateway "10.200.1.2"); the connected
  // subnet route comes with the address and is not listed.
  std::vector<std::pair<std::string, std::string>> routes;
  bool healthy = false;
};

inline constexpr char kDefaultGaudinetPath[] = "/etc/habanalabs/gaudinet.json";

// An empty path turns that output off.
struct OutputConfig {
  // HCL's default location, where Habana's container runtime copies it
  // from into every Gaudi container.
  std::string gaudinet_path = kDefaultGaudinetPath;
  // e.g. /etc/systemd/network
  std::string networkd_dir;
  // e.g. /etc/kubernetes/node-feature-discovery/features.d/rocenet
  std::string nfd_features_path;
  // e.g. /etc/NetworkManager/conf.d/90-rocenet.conf: NetworkManager leaves
  // the ports alone (NetworkManagerOutput).
  std::string network_manager_path;
  std::string nfd_label = "rocenet.io/scale-out-ready";
  // The NFD file says it expires this long after it was written (NFD's
  // `# +expiry-time=` directive) and is rewritten while rocenetd runs, so a
  // label never outlives the daemon that vouches for it by more than this.
  absl::Duration nfd_lifetime = absl::Minutes(10);
  // rocenet's CNI plugin binary as rocenetd sees it (in a container, the
  // host's CNI bin directory mounted, e.g. /host/cni/bin/rocenet); only
  // RemoveAll touches it. "": never removed.
  std::string cni_plugin_path;
};

class NetworkManagerOutput;

class HostOutputs {
 public:
  // `fs`, `clock` and `network_manager` must outlive the object; without
  // `network_manager` the NetworkManager drop-in is written but NetworkManager
  // is not told.
  HostOutputs(os::FileSystem* fs, const os::Clock* clock, OutputConfig config,
              os::NetworkManagerClient* network_manager = nullptr);
  ~HostOutputs();

  // Brings every enabled output in line with `ports`:
  //  - gaudinet.json lists every Gaudi L3 port with an address and its
  //    gateway MAC, once every such port that is up has one (PlanGaudinet:
  //    a port that is down without one is left out, and named by
  //    gaudinet_missing()), its directory made if missing. Otherwise the
  //    file stays as it is: a job that is running keeps the file it started
  //    with. No Gaudi port or L2 mode: no file (in L2 its presence would
  //    switch HCL to L3).
  //  - one .network file per provisioned port; rocenet's files for other
  //    ports are removed, files of anyone else in the directory are not.
  //  - the NFD file exists while every port is healthy and provisioned (and
  //    there is at least one), and is removed otherwise so the label goes.
  //  - the NetworkManager drop-in lists every port (NetworkManagerOutput).
  // Parent directories are created as needed.
  absl::Status Update(const std::vector<PortOutput>& ports);

  // Rewrites the NFD file with a new expiry once half its lifetime has
  // passed by the boot clock (and puts it back if someone removed it).
  // Call it periodically.
  absl::Status RefreshExpiry();

  // A clean stop: removes the NFD file, so the label goes now rather than at
  // its expiry. The other outputs stay: they describe configuration that
  // stays on the ports (and NetworkManager must keep off them meanwhile).
  absl::Status Withdraw();

  // rocenet leaving the node (docs/rocenetd.md#uninstall): removes every
  // output that exists (gaudinet.json, rocenet's networkd files, the NFD
  // file, the NetworkManager drop-in, after which NetworkManager reloads
  // its configuration) and the CNI plugin, unless `pods_on_ports` is not empty: those
  // pods' network deletion runs it, and without it their pods would hang
  // in Terminating, so it is kept with that reason. What is already gone
  // is not reported; a failure keeps its output with the error. Every
  // output is listed here, so a new one joins with one line.
  RemovalReport RemoveAll(const std::vector<std::string>& pods_on_ports);

  // The Gaudi L3 ports the host gaudinet.json leaves out as of the last
  // Update (no address yet), sorted; empty with the file off.
  const std::vector<std::string>& gaudinet_missing() const { return gaudinet_missing_; }

 private:
  // Each appends its failures to `errors`.
  void UpdateGaudinet(const std::vector<PortOutput>& ports, std::vector<absl::Status>& errors);
  void UpdateNetworkd(const std::vector<PortOutput>& ports, std::vector<absl::Status>& errors);
  void UpdateNfd(const std::vector<PortOutput>& ports, std::vector<absl::Status>& errors);
  // RemoveAll's steps; each reports into `report`.
  void RemoveFileIfThere(const std::string& path, RemovalReport& report);
  void RemoveNetworkdFiles(RemovalReport& report);
  void RemoveCniPlugin(const std::vector<std::string>& pods_on_ports, RemovalReport& report);

  // Writes `content` to `path` unless the file already holds exactly that.
  absl::Status WriteIfChanged(const std::string& path, const std::string& content);

  // Writes the NFD labels `labels` with an expiry from now.
  absl::Status WriteNfd(const std::string& labels);
  // RefreshExpiry without the file's name in the error.
  absl::Status RefreshNfd();

  os::FileSystem* fs_;
  const os::Clock* clock_;
  OutputConfig config_;
  std::unique_ptr<NetworkManagerOutput> network_manager_;  // null when off
  // The NFD labels on disk, empty while there is no file; when they expire
  // (a wall time: nfd-worker compares it with its own clock); and when
  // they were written, on the boot clock, which times the renewal (the
  // wall clock set back would postpone it by as much).
  std::string nfd_labels_;
  absl::Time nfd_expiry_;
  os::BootTime nfd_written_;
  std::vector<std::string> gaudinet_missing_;
};

}  // namespace rocenet::outputs
