// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/addressing/applied_store.h"
#include "daemon/api/addressing_service.h"
#include "daemon/api/attachments_service.h"
#include "daemon/api/health_service.h"
#include "daemon/api/metrics.h"
#include "daemon/api/metrics_config.h"
#include "daemon/api/port_discovery_service.h"
#include "daemon/api/reservations_service.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/inventory/port_inventory.h"
#include "daemon/os/linux/dcb_linux.h"
#include "daemon/os/linux/ethtool_linux.h"
#include "daemon/os/linux/event_loop.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "daemon/os/linux/metrics_exposer.h"
#include "daemon/os/linux/netlink_linux.h"
#include "daemon/os/linux/netns_linux.h"
#include "daemon/os/linux/packet_socket_linux.h"
#include "daemon/os/linux/signals.h"
#include "daemon/os/linux/socket_lock.h"
#include "daemon/os/linux/sysfs_linux.h"
#include "daemon/os/linux/system_clock.h"
#include "daemon/os/linux/unix_socket.h"
#include "daemon/server/api_server.h"
#include "daemon/server/config_watcher.h"
#include "daemon/server/node.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "prometheus/exposer.h"

namespace rocenet::server {
namespace {

constexpr absl::Duration kShutdownGrace = absl::Seconds(2);

// The attachment journal moved from the state directory to the runtime
// directory; a daemon started over an older one's pods takes its journal over.
absl::Status AdoptOldJournal(os::FileSystem& fs, const std::string& old_path,
                             const std::string& path) {
  if (old_path == path || !absl::IsNotFound(fs.ReadFile(path).status())) return absl::OkStatus();
  absl::StatusOr<std::string> old = fs.ReadFile(old_path);
  if (absl::IsNotFound(old.status())) return absl::OkStatus();
  if (!old.ok()) return old.status();
  RETURN_IF_ERROR(fs.WriteFileAtomic(path, *old, 0600));
  SPDLOG_INFO("took over the attachment journal {} as {}", old_path, path);
  return fs.RemoveFile(old_path);
}

// The diagnostics' settings an older configuration gives rocenetd.
void WarnMovedToDiagd(const std::set<std::string>& keys) {
  static const auto* kWhere = new std::map<std::string, std::string>{
      {"diag_port", "--data-port"}, {"diag_secret_file", "--secret-file"},
      {"node_name", "--node-name"}};
  for (const std::string& key : keys) {
    auto where = kWhere->find(key);
    SPDLOG_WARN("{}: the diagnostics moved to rocenet-diagd ({}); ignored here", key,
                where != kWhere->end() ? where->second : "its flags");
  }
}

absl::Status CheckSysfsRoot(const std::string& root) {
  struct stat st;
  if (stat(root.c_str(), &st) < 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sysfs_root ", root, ": not a readable directory"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunDaemon(const config::DaemonOptions& options, const std::string& version,
                       ConfigOrigin config, const OsOverrides& os_overrides) {
  RETURN_IF_ERROR(CheckSysfsRoot(options.sysfs_root));
  WarnMovedToDiagd(options.moved_to_diagd);
  // One rocenetd per socket, and so per node: a new one waits here, before it
  // touches any port, for an old one that is still stopping.
  RETURN_IF_ERROR(os::MakeSocketDirectory(options.socket_path));
  // Meanwhile it listens beside the socket, and the old one hands the path
  // over when it stops: calls made during the change wait instead of failing.
  std::optional<os::SuccessorListener> successor;
  absl::StatusOr<std::unique_ptr<os::SocketLock>> locked =
      os::SocketLock::Acquire(options.socket_path, options.takeover_wait, [&](pid_t holder) {
        SPDLOG_WARN("socket {}: another rocenetd{} still holds it; waiting up to {} for it to stop",
                    options.socket_path,
                    holder > 0 ? absl::StrCat(" (pid ", holder, ")") : std::string(),
                    absl::FormatDuration(options.takeover_wait));
        absl::StatusOr<os::SuccessorListener> listener = ApiServer::ListenAsSuccessor(options);
        if (listener.ok()) {
          successor = *listener;
          SPDLOG_INFO("listening on {} meanwhile, for the hand-over",
                      os::SuccessorPath(options.socket_path));
        } else {
          SPDLOG_WARN("{}; the socket will be unserved between the two", listener.status().message());
        }
      });
  if (!locked.ok()) {
    if (successor.has_value()) os::AbandonSuccessor(options.socket_path, *successor);
    return locked.status();
  }
  std::unique_ptr<os::SocketLock> socket_lock = std::move(*locked);
  ASSIGN_OR_RETURN(std::unique_ptr<os::EventLoop> loop, os::EventLoop::Create());
  ASSIGN_OR_RETURN(std::unique_ptr<os::NetlinkLinux> netlink, os::NetlinkLinux::Open());
  os::SysfsLinux sysfs(options.sysfs_root);
  os::SystemClock clock;
  os::FileSystemLinux fs;
  os::PacketSocketFactoryLinux sockets;
  RETURN_IF_ERROR(fs.MakeDirectories(options.state_dir, 0700));
  addressing::AppliedStore store(&fs, absl::StrCat(options.state_dir, "/addressing.json"));
  if (absl::Status s = store.Load(); !s.ok()) {
    // Without the record rocenet cannot tell its addresses from anyone
    // else's; it then only adds and never removes until it has applied again.
    SPDLOG_ERROR("{}; starting with no record of applied addresses", s.ToString());
  }
  ASSIGN_OR_RETURN(std::unique_ptr<os::EthtoolLinux> ethtool, os::EthtoolLinux::Create());
  inventory::PortInventory inventory(options.selection, &sysfs, ethtool.get());
  addressing::AddressingDriver addressing(netlink.get(), &store, config::PlannerConfigOf(options));
  outputs::HostOutputs host_outputs(&fs, &clock, options.outputs);
  ASSIGN_OR_RETURN(std::unique_ptr<os::NetnsLinux> netns, os::NetnsLinux::Create());
  // The journal describes pod namespaces, which end with the boot, so it
  // lives in the runtime directory (tmpfs): it is written ahead of every move
  // with a sync that costs nothing there, and a reboot cannot leave records
  // naming namespaces or /proc/<pid> paths of the boot before.
  const std::string runtime_dir = config::RuntimeDirOf(options);
  RETURN_IF_ERROR(fs.MakeDirectories(runtime_dir, 0700));
  const std::string journal_path = absl::StrCat(runtime_dir, "/attachments.json");
  RETURN_IF_ERROR(
      AdoptOldJournal(fs, absl::StrCat(options.state_dir, "/attachments.json"), journal_path));
  attach::Journal journal(&fs, journal_path);
  // A journal that cannot be read must stop the daemon: it is the only record
  // of which ports are in which pods.
  RETURN_IF_ERROR(journal.Load());
  // RDMA devices follow their ports into pods in exclusive namespace mode;
  // a kernel without RDMA has nothing to move.
  absl::StatusOr<std::unique_ptr<os::Rdma>> rdma = netns->OpenRdma(netns->host());
  if (!rdma.ok()) SPDLOG_DEBUG("{}: no RDMA device will be moved", rdma.status().message());
  // Reservations name claims, which outlive a rocenetd restart (kubelet
  // prepares a claim once), so they live in the state directory; one that
  // cannot be read stops the daemon like the journal does: without it,
  // ports reserved for a claim's pods would go to any pod.
  attach::ReservationStore reservations(&fs, absl::StrCat(options.state_dir, "/reservations.json"));
  RETURN_IF_ERROR(reservations.Load());
  // Made right for the loaded reservations by the node's first refresh.
  attach::ReservationFiles reservation_files(&fs, options.hcl_dir);
  attach::AttachManager attachments(netlink.get(), netns.get(), &journal,
                                    rdma.ok() ? rdma->get() : nullptr, &reservations,
                                    &reservation_files);
  absl::StatusOr<std::unique_ptr<os::Dcb>> dcb =
      os_overrides.open_dcb ? os_overrides.open_dcb()
                            : absl::StatusOr<std::unique_ptr<os::Dcb>>(os::DcbLinux::Open());
  if (!dcb.ok()) SPDLOG_WARN("{}; PFC is neither read nor set", dcb.status().message());
  qos::PfcController pfc(dcb.ok() ? dcb->get() : nullptr, options.pfc);
  Node node(NodeParts{.loop = loop.get(),
                      .netlink = netlink.get(),
                      .clock = &clock,
                      .inventory = &inventory,
                      .sockets = &sockets,
                      .addressing = &addressing,
                      .outputs = &host_outputs,
                      .attach = &attachments,
                      .reservation_files = &reservation_files,
                      .pfc = &pfc,
                      .pfc_unhealthy = options.pfc_unhealthy,
                      .errors_interval = options.errors_interval});
  RETURN_IF_ERROR(node.Start());

  ASSIGN_OR_RETURN(api::GateConfig gate_config, GateConfigOf(options.security));
  api::RequestGate gate(CallerOf, gate_config);
  auto reload_metrics = std::make_shared<api::ConfigReloadMetrics>(absl::Now());
  Reloader reloader(options, std::move(config.load),
                    ReloadTargets{.gate = &gate,
                                  .addressing = &addressing,
                                  .node = &node,
                                  .metrics = reload_metrics.get()});
  ASSIGN_OR_RETURN(const int signal_fd, os::OpenSignalFd(kHandledSignals));
  RETURN_IF_ERROR(loop->AddReader(signal_fd, [&] {
    const int sig = os::ReadSignal(signal_fd);
    if (sig == SIGTERM || sig == SIGINT) {
      SPDLOG_INFO("received {}; stopping, network configuration stays as it is",
                  sig == SIGTERM ? "SIGTERM" : "SIGINT");
      loop->Stop();
    } else if (sig == SIGHUP) {
      // Errors are logged and counted by the reloader; the daemon runs on.
      reloader.Reload("received SIGHUP").IgnoreError();
    }
  }));
  std::unique_ptr<ConfigWatcher> config_watcher;
  if (!config.watch_path.empty()) {
    auto on_change = [&reloader] { reloader.Reload("the config file changed").IgnoreError(); };
    absl::StatusOr<std::unique_ptr<ConfigWatcher>> watching = ConfigWatcher::Start(
        loop.get(), &fs, {.path = config.watch_path, .loaded = config.loaded}, on_change);
    // Without the watch (inotify instances used up) SIGHUP still reloads.
    if (watching.ok()) {
      config_watcher = *std::move(watching);
    } else {
      SPDLOG_ERROR("config {}: not watched, changes need SIGHUP: {}", config.watch_path,
                   watching.status().message());
    }
  }

  api::PortDiscoveryService port_service(&node, &gate);
  api::HealthService health_service(&node, &gate);
  api::AttachmentsService attachments_service(&node, &gate);
  api::ReservationsService reservations_service(&node, &gate);
  api::AddressingService addressing_service(&node, &gate);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  ASSIGN_OR_RETURN(std::unique_ptr<ApiServer> api_server,
                   ApiServer::Start(options, loop.get(),
                                    {&port_service, &health_service, &attachments_service,
                                     &reservations_service, &addressing_service},
                                    successor));
  grpc::Server* server = api_server->server();

  std::unique_ptr<prometheus::Exposer> exposer;
  auto metrics = std::make_shared<api::NodeMetrics>(&node, version);
  if (!options.metrics_address.empty()) {
    absl::StatusOr<std::unique_ptr<prometheus::Exposer>> started =
        os::StartMetricsExposer(options.metrics_address, {metrics, reload_metrics});
    if (!started.ok()) {
      api_server->Shutdown(absl::Now());
      return started.status();
    }
    exposer = std::move(*started);
  }

  server->GetHealthCheckService()->SetServingStatus(true);
  const absl::Status ran = loop->Run();

  api_server->HandOver();
  server->GetHealthCheckService()->SetServingStatus(false);
  node.Shutdown();
  // A clean stop takes the readiness label with it; after a crash it
  // expires on its own (OutputConfig::nfd_lifetime).
  if (absl::Status s = host_outputs.Withdraw(); !s.ok()) SPDLOG_ERROR("{}", s.ToString());
  api_server->Shutdown(absl::Now() + kShutdownGrace);
  exposer.reset();
  config_watcher.reset();
  loop->RemoveReader(signal_fd);
  close(signal_fd);
  SPDLOG_INFO("stopped");
  return ran;
}

}  // namespace rocenet::server
