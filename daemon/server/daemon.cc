// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "daemon/addressing/applied_store.h"
#include "daemon/api/addressing_service.h"
#include "daemon/api/attachments_service.h"
#include "daemon/api/caller.h"
#include "daemon/api/health_service.h"
#include "daemon/api/lifecycle_service.h"
#include "daemon/api/metrics.h"
#include "daemon/api/metrics_config.h"
#include "daemon/api/port_discovery_service.h"
#include "daemon/api/reservations_service.h"
#include "daemon/attach/journal.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/inventory/port_inventory.h"
#include "daemon/node/node.h"
#include "daemon/os/linux/dcb_linux.h"
#include "daemon/os/linux/ethtool_linux.h"
#include "daemon/os/linux/event_loop.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "daemon/os/linux/metrics_exposer.h"
#include "daemon/os/linux/netlink_linux.h"
#include "daemon/os/linux/netns_linux.h"
#include "daemon/os/linux/network_manager_sd_bus.h"
#include "daemon/os/linux/packet_socket_linux.h"
#include "daemon/os/linux/signals.h"
#include "daemon/os/linux/socket_lock.h"
#include "daemon/os/linux/sysfs_linux.h"
#include "daemon/os/linux/unix_listener.h"
#include "daemon/os/linux/unix_socket.h"
#include "daemon/server/api_server.h"
#include "daemon/server/config_watcher.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "prometheus/exposer.h"

namespace rocenet::server {
namespace {

constexpr absl::Duration kShutdownGrace = absl::Seconds(2);

// The kernel's id of this boot, which the health memory is kept for; empty
// (the memory then is not kept) where the kernel does not say.
std::string BootId(const os::FileSystem& fs) {
  absl::StatusOr<std::string> id = fs.ReadFile("/proc/sys/kernel/random/boot_id");
  if (!id.ok()) {
    SPDLOG_WARN("no boot id ({}); health memory is not kept across restarts",
                id.status().ToString());
    return "";
  }
  return std::string(absl::StripAsciiWhitespace(*id));
}

// The diagnostics' settings an older configuration gives rocenetd.
void WarnMovedToDiagd(const std::set<std::string>& keys) {
  static const auto* kWhere =
      new std::map<std::string, std::string>{{"diag_port", "--data-port"},
                                             {"diag_secret_file", "--secret-file"},
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

// Everything rocenetd runs, in the order it is built; destroyed in reverse.
struct Daemon::Parts {
  config::DaemonOptions options;
  std::string version;
  ConfigOrigin config;
  OsOverrides os;

  // Step 1: the socket, ours alone.
  std::unique_ptr<os::SocketLock> socket_lock;
  std::optional<os::SuccessorListener> successor;
  // Step 2: the OS, and the loop that is rocenetd's thread and clock.
  std::unique_ptr<os::EventLoop> loop;
  std::unique_ptr<os::NetlinkLinux> netlink;
  std::unique_ptr<os::SysfsLinux> sysfs;
  os::FileSystemLinux fs;
  os::PacketSocketFactoryLinux sockets;
  std::unique_ptr<os::EthtoolLinux> ethtool;
  std::unique_ptr<os::NetnsLinux> netns;
  std::unique_ptr<os::Rdma> rdma;
  std::unique_ptr<os::Dcb> dcb;
  os::NetworkManagerSdBus network_manager;
  // Step 3: what rocenetd keeps, loaded.
  std::unique_ptr<addressing::AppliedStore> store;
  std::unique_ptr<attach::Journal> journal;
  std::unique_ptr<attach::ReservationStore> reservations;
  // Step 4: the node.
  std::unique_ptr<inventory::PortInventory> inventory;
  std::unique_ptr<addressing::AddressingDriver> addressing;
  std::unique_ptr<outputs::HostOutputs> host_outputs;
  std::unique_ptr<attach::ReservationFiles> reservation_files;
  std::unique_ptr<attach::AttachManager> attachments;
  std::unique_ptr<qos::PfcController> pfc;
  std::unique_ptr<node::Node> node;
  // Step 5: configuration changes, signals, serving.
  std::unique_ptr<api::RequestGate> gate;
  std::shared_ptr<api::ConfigReloadMetrics> reload_metrics;
  std::unique_ptr<Reloader> reloader;
  int signal_fd = -1;
  std::unique_ptr<ConfigWatcher> config_watcher;
  std::unique_ptr<api::PortDiscoveryService> port_service;
  std::unique_ptr<api::HealthService> health_service;
  std::unique_ptr<api::AttachmentsService> attachments_service;
  std::unique_ptr<api::ReservationsService> reservations_service;
  std::unique_ptr<api::AddressingService> addressing_service;
  std::unique_ptr<api::LifecycleService> lifecycle_service;
  std::unique_ptr<ApiServer> api_server;
  // The exposer holds its collectables weakly: they live here.
  std::shared_ptr<api::NodeMetrics> metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  bool shut_down = false;

  ~Parts() {
    if (loop != nullptr && signal_fd >= 0) loop->RemoveReader(signal_fd);
    if (signal_fd >= 0) close(signal_fd);
  }

  absl::Status TakeSocket();
  absl::Status OpenOs();
  absl::Status LoadState();
  absl::Status StartNode();
  absl::Status StartServing();
  void OnSignal();
};

absl::Status Daemon::Parts::TakeSocket() {
  // One rocenetd per socket, and so per node: a new one waits here, before it
  // touches any port, for an old one that is still stopping.
  RETURN_IF_ERROR(os::MakeSocketDirectory(options.socket_path));
  // Meanwhile it listens beside the socket, and the old one hands the path
  // over when it stops: calls made during the change wait instead of failing.
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
          SPDLOG_WARN("{}; the socket will be unserved between the two",
                      listener.status().message());
        }
      });
  if (!locked.ok()) {
    if (successor.has_value()) os::AbandonSuccessor(options.socket_path, *successor);
    successor.reset();
    return locked.status();
  }
  socket_lock = std::move(*locked);
  return absl::OkStatus();
}

absl::Status Daemon::Parts::OpenOs() {
  ASSIGN_OR_RETURN(loop, os::EventLoop::Create());
  ASSIGN_OR_RETURN(netlink, os::NetlinkLinux::Open());
  sysfs = std::make_unique<os::SysfsLinux>(options.sysfs_root);
  ASSIGN_OR_RETURN(ethtool, os::EthtoolLinux::Create());
  ASSIGN_OR_RETURN(netns, os::NetnsLinux::Create());
  // RDMA devices follow their ports into pods in exclusive namespace mode;
  // a kernel without RDMA has nothing to move.
  absl::StatusOr<std::unique_ptr<os::Rdma>> opened_rdma = netns->OpenRdma(netns->host());
  if (opened_rdma.ok()) {
    rdma = std::move(*opened_rdma);
  } else {
    SPDLOG_DEBUG("{}: no RDMA device will be moved", opened_rdma.status().message());
  }
  absl::StatusOr<std::unique_ptr<os::Dcb>> opened_dcb =
      os.open_dcb ? os.open_dcb() : absl::StatusOr<std::unique_ptr<os::Dcb>>(os::DcbLinux::Open());
  if (opened_dcb.ok()) {
    dcb = std::move(*opened_dcb);
  } else {
    SPDLOG_WARN("{}; PFC is neither read nor set", opened_dcb.status().message());
  }
  return absl::OkStatus();
}

absl::Status Daemon::Parts::LoadState() {
  RETURN_IF_ERROR(fs.MakeDirectories(options.state_dir, 0700));
  store = std::make_unique<addressing::AppliedStore>(
      &fs, absl::StrCat(options.state_dir, "/addressing.json"));
  if (absl::Status s = store->Load(); !s.ok()) {
    // Without the record rocenet cannot tell its addresses from anyone
    // else's; it then only adds and never removes until it has applied again.
    SPDLOG_ERROR("{}; starting with no record of applied addresses", s.ToString());
  }
  // The journal describes pod namespaces, which end with the boot, so it
  // lives in the runtime directory (tmpfs): it is written ahead of every move
  // with a sync that costs nothing there, and a reboot cannot leave records
  // naming namespaces or /proc/<pid> paths of the boot before.
  const std::string runtime_dir = config::RuntimeDirOf(options);
  RETURN_IF_ERROR(fs.MakeDirectories(runtime_dir, 0700));
  const std::string journal_path = absl::StrCat(runtime_dir, "/attachments.json");
  RETURN_IF_ERROR(
      attach::AdoptJournal(fs, absl::StrCat(options.state_dir, "/attachments.json"), journal_path));
  journal = std::make_unique<attach::Journal>(&fs, journal_path);
  // A journal that cannot be read must stop the daemon: it is the only record
  // of which ports are in which pods.
  RETURN_IF_ERROR(journal->Load());
  // Reservations name claims, which outlive a rocenetd restart (kubelet
  // prepares a claim once), so they live in the state directory; one that
  // cannot be read stops the daemon like the journal does: without it,
  // ports reserved for a claim's pods would go to any pod.
  reservations = std::make_unique<attach::ReservationStore>(
      &fs, absl::StrCat(options.state_dir, "/reservations.json"));
  return reservations->Load();
}

absl::Status Daemon::Parts::StartNode() {
  inventory =
      std::make_unique<inventory::PortInventory>(options.selection, sysfs.get(), ethtool.get());
  addressing = std::make_unique<addressing::AddressingDriver>(netlink.get(), store.get(),
                                                              config::PlannerConfigOf(options));
  host_outputs =
      std::make_unique<outputs::HostOutputs>(&fs, loop.get(), options.outputs, &network_manager);
  // Made right for the loaded reservations by the node's first refresh.
  reservation_files = std::make_unique<attach::ReservationFiles>(&fs, options.hcl_dir);
  attachments =
      std::make_unique<attach::AttachManager>(netlink.get(), netns.get(), journal.get(), rdma.get(),
                                              reservations.get(), reservation_files.get());
  pfc = std::make_unique<qos::PfcController>(dcb.get(), options.pfc);
  node = std::make_unique<node::Node>(node::NodeParts{
      .loop = loop.get(),
      .netlink = netlink.get(),
      .inventory = inventory.get(),
      .sockets = &sockets,
      .addressing = addressing.get(),
      .outputs = host_outputs.get(),
      .attach = attachments.get(),
      .reservation_files = reservation_files.get(),
      .pfc = pfc.get(),
      .pfc_unhealthy = options.pfc_unhealthy,
      .errors_interval = options.errors_interval,
      .health = options.health,
      .fs = &fs,
      .health_state_path = absl::StrCat(config::RuntimeDirOf(options), "/health.json"),
      .boot_id = BootId(fs),
      .state_dir = options.state_dir});
  return node->Start();
}

void Daemon::Parts::OnSignal() {
  const int sig = os::ReadSignal(signal_fd);
  if (sig == SIGTERM || sig == SIGINT) {
    SPDLOG_INFO("received {}; stopping, network configuration stays as it is",
                sig == SIGTERM ? "SIGTERM" : "SIGINT");
    loop->Stop();
  } else if (sig == SIGHUP) {
    // Errors are logged and counted by the reloader; the daemon runs on.
    reloader->Reload("received SIGHUP").IgnoreError();
  }
}

absl::Status Daemon::Parts::StartServing() {
  ASSIGN_OR_RETURN(api::GateConfig gate_config, GateConfigOf(options.security));
  os::Loop* clock = loop.get();
  gate = std::make_unique<api::RequestGate>(
      [](const grpc::ServerContext& context) {
        return api::CallerOf(context, os::PeerCredentialsOf);
      },
      gate_config, [clock] { return clock->BootNow(); });
  reload_metrics = std::make_shared<api::ConfigReloadMetrics>(loop->Now());
  reloader = std::make_unique<Reloader>(options, std::move(config.load),
                                        ReloadTargets{.gate = gate.get(),
                                                      .addressing = addressing.get(),
                                                      .node = node.get(),
                                                      .metrics = reload_metrics.get()});
  ASSIGN_OR_RETURN(signal_fd, os::OpenSignalFd(kHandledSignals));
  RETURN_IF_ERROR(loop->AddReader(signal_fd, [this] { OnSignal(); }));
  if (!config.watch_path.empty()) {
    Reloader* on = reloader.get();
    absl::StatusOr<std::unique_ptr<ConfigWatcher>> watching =
        ConfigWatcher::Start(loop.get(), &fs, {.path = config.watch_path, .loaded = config.loaded},
                             [on] { on->Reload("the config file changed").IgnoreError(); });
    // Without the watch (inotify instances used up) SIGHUP still reloads.
    if (watching.ok()) {
      config_watcher = *std::move(watching);
    } else {
      SPDLOG_ERROR("config {}: not watched, changes need SIGHUP: {}", config.watch_path,
                   watching.status().message());
    }
  }

  port_service = std::make_unique<api::PortDiscoveryService>(node.get(), gate.get());
  health_service = std::make_unique<api::HealthService>(node.get(), gate.get());
  attachments_service = std::make_unique<api::AttachmentsService>(node.get(), gate.get());
  reservations_service = std::make_unique<api::ReservationsService>(node.get(), gate.get());
  addressing_service = std::make_unique<api::AddressingService>(node.get(), gate.get());
  lifecycle_service = std::make_unique<api::LifecycleService>(node.get(), gate.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::optional<os::SuccessorListener> listener = std::move(successor);
  successor.reset();
  ASSIGN_OR_RETURN(api_server,
                   ApiServer::Start(options, loop.get(),
                                    {port_service.get(), health_service.get(),
                                     attachments_service.get(), reservations_service.get(),
                                     addressing_service.get(), lifecycle_service.get()},
                                    listener));
  if (!options.metrics_address.empty()) {
    metrics = std::make_shared<api::NodeMetrics>(node.get(), version);
    absl::StatusOr<std::unique_ptr<prometheus::Exposer>> started =
        os::StartMetricsExposer(options.metrics_address, {metrics, reload_metrics});
    if (!started.ok()) {
      api_server->Shutdown(loop->Now());
      return started.status();
    }
    exposer = std::move(*started);
  }
  return absl::OkStatus();
}

Daemon::Daemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Daemon::~Daemon() { Shutdown(); }

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Build(const config::DaemonOptions& options,
                                                      const std::string& version,
                                                      ConfigOrigin config, const OsOverrides& os) {
  RETURN_IF_ERROR(CheckSysfsRoot(options.sysfs_root));
  WarnMovedToDiagd(options.moved_to_diagd);
  auto parts = std::make_unique<Parts>();
  parts->options = options;
  parts->version = version;
  parts->config = std::move(config);
  parts->os = os;
  RETURN_IF_ERROR(parts->TakeSocket());
  RETURN_IF_ERROR(parts->OpenOs());
  RETURN_IF_ERROR(parts->LoadState());
  RETURN_IF_ERROR(parts->StartNode());
  RETURN_IF_ERROR(parts->StartServing());
  return std::unique_ptr<Daemon>(new Daemon(std::move(parts)));
}

absl::Status Daemon::Run() {
  parts_->api_server->server()->GetHealthCheckService()->SetServingStatus(true);
  return parts_->loop->Run();
}

void Daemon::Shutdown() {
  Parts& p = *parts_;
  if (p.shut_down) return;
  p.shut_down = true;
  p.api_server->HandOver();
  p.api_server->server()->GetHealthCheckService()->SetServingStatus(false);
  p.node->Shutdown();
  // A clean stop takes the readiness label with it; after a crash it
  // expires on its own (OutputConfig::nfd_lifetime).
  if (absl::Status s = p.host_outputs->Withdraw(); !s.ok()) SPDLOG_ERROR("{}", s.ToString());
  p.api_server->Shutdown(p.loop->Now() + kShutdownGrace);
  p.exposer.reset();
  p.config_watcher.reset();
  SPDLOG_INFO("stopped");
}

absl::Status RunDaemon(const config::DaemonOptions& options, const std::string& version,
                       ConfigOrigin config, const OsOverrides& os) {
  ASSIGN_OR_RETURN(std::unique_ptr<Daemon> daemon,
                   Daemon::Build(options, version, std::move(config), os));
  const absl::Status ran = daemon->Run();
  daemon->Shutdown();
  return ran;
}

}  // namespace rocenet::server
