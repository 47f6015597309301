// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/diagd.h"

#include <unistd.h>

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/api/caller.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/linux/credentials.h"
#include "daemon/diag/linux/engine.h"
#include "daemon/diag/validation_label.h"
#include "daemon/diagd/diagnostics_service.h"
#include "daemon/diagd/node_ports.h"
#include "daemon/diagd/node_watch.h"
#include "daemon/diagd/unix_acceptor.h"
#include "daemon/node_client/node_client.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "daemon/os/linux/metrics_exposer.h"
#include "daemon/os/linux/netlink_linux.h"
#include "daemon/os/linux/process_linux.h"
#include "daemon/os/linux/socket_lock.h"
#include "daemon/os/linux/system_clock.h"
#include "daemon/os/linux/unix_listener.h"
#include "daemon/os/linux/unix_socket.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "prometheus/exposer.h"

namespace rocenet::diagd {
namespace {

constexpr absl::Duration kShutdownGrace = absl::Seconds(2);
// As rocenetd's API: requests are small; progress events and results too.
constexpr int kMaxMessageBytes = 4 << 20;

// The gRPC server of `service`, without a listener of its own: the
// UnixAcceptor hands it the socket's connections.
absl::StatusOr<std::unique_ptr<grpc::Server>> BuildServer(grpc::Service* service) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) return absl::UnavailableError("gRPC: cannot start the server");
  return server;
}

}  // namespace

absl::Status RunDiagd(const DiagdOptions& options) {
  RETURN_IF_ERROR(os::MakeSocketDirectory(options.socket_path));
  // One rocenet-diagd per socket: a new one (rolling update) waits for the
  // old one to stop, as it holds the data port too.
  ASSIGN_OR_RETURN(
      std::unique_ptr<os::SocketLock> socket_lock,
      os::SocketLock::Acquire(options.socket_path, options.takeover_wait, [&](pid_t holder) {
        SPDLOG_WARN(
            "socket {}: another rocenet-diagd{} still holds "
            "it; waiting up to {} for it to stop",
            options.socket_path, holder > 0 ? absl::StrCat(" (pid ", holder, ")") : std::string(),
            absl::FormatDuration(options.takeover_wait));
      }));
  // Read-only: link state and drop counters of the ports under test.
  ASSIGN_OR_RETURN(std::unique_ptr<os::NetlinkLinux> netlink, os::NetlinkLinux::Open());
  os::SystemClock clock;
  os::FileSystemLinux fs;
  // Starts the RDMA stage's benchmarks (perftest, Habana's tool).
  os::ProcessRunnerLinux process_runner;

  // The scheduler's view of the triage stages this node passed (NFD).
  std::unique_ptr<diag::ValidationLabel> validation;
  diag::ValidationSink record_validation = nullptr;
  if (!options.validation_file.empty()) {
    validation = std::make_unique<diag::ValidationLabel>(&fs, &clock, options.validation_file);
    record_validation = [label = validation.get()](const diag::peer::ValidationNotice& notice) {
      if (absl::Status s =
              label->Record(notice.stage, notice.passed, notice.detail, notice.from_node);
          !s.ok()) {
        SPDLOG_WARN("{}", s.message());
        return;
      }
      if (notice.passed) {
        SPDLOG_INFO("validation: the {} stage passed (coordinated by {})", notice.stage,
                    notice.from_node);
      } else {
        SPDLOG_WARN("validation: the {} stage failed (coordinated by {}): {}; label removed",
                    notice.stage, notice.from_node, notice.detail);
      }
    };
  }

  std::unique_ptr<NodeClient> node_client = MakeGrpcNodeClient(options.node_socket);
  std::unique_ptr<diag::DiagEngine> engine;
  NodeWatchOptions watch_options;
  watch_options.socket = options.node_socket;
  watch_options.links = [&netlink] { return netlink->ListLinks(); };
  watch_options.on_addresses = [&engine](std::set<Ipv4Address> addresses) {
    engine->SetAddresses(std::move(addresses));
  };
  NodeWatch watch(std::move(watch_options), node_client.get());
  engine = std::make_unique<diag::DiagEngine>(
      diag::EngineOptions{
          .data_port = options.data_port,
          .node_name = DiagNodeName(options.node_name),
          .clock = &clock,
          .secret = options.secret_file.empty() ? nullptr : diag::FileSecret(options.secret_file),
          .validation = record_validation,
          .runner = &process_runner,
          .counters = [client = node_client.get()]()
              -> absl::StatusOr<std::vector<diag::peer::PortCounterValues>> {
            ASSIGN_OR_RETURN(v1::ListPortsResponse ports, client->ReadCounters());
            return CountersOf(ports);
          }},
      [&watch] { return watch.Ports(); });
  // Every call is admitted by the caller the kernel names: root only (the
  // tests load the fabric), at a bounded rate, with bounded strings.
  api::RequestGate gate(
      [](const grpc::ServerContext& context) {
        return api::CallerOf(context, os::PeerCredentialsOf);
      },
      api::GateConfig{}, [&clock] { return clock.BootNow(); });
  DiagnosticsService service(engine.get(), {.gate = &gate, .clock = &clock});
  ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server, BuildServer(&service));
  absl::StatusOr<std::unique_ptr<UnixAcceptor>> acceptor =
      UnixAcceptor::Start(options.socket_path, server.get());
  if (!acceptor.ok()) {
    server->Shutdown(absl::ToChronoTime(clock.Now()));
    return absl::Status(acceptor.status().code(), absl::StrCat("socket ", options.socket_path, ": ",
                                                               acceptor.status().message()));
  }
  if (absl::Status s = engine->Start(); !s.ok()) {
    (*acceptor)->Stop();
    server->Shutdown(absl::ToChronoTime(clock.Now()));
    return s;
  }
  watch.Start();
  SPDLOG_INFO("serving rocenet.v1.Diagnostics on {}; ports from rocenetd at {}",
              options.socket_path, options.node_socket);

  std::unique_ptr<prometheus::Exposer> exposer;
  if (!options.metrics_address.empty()) {
    absl::StatusOr<std::unique_ptr<prometheus::Exposer>> started =
        os::StartMetricsExposer(options.metrics_address, {service.metrics()});
    if (!started.ok()) {
      watch.Stop();
      engine->Stop();
      (*acceptor)->Stop();
      server->Shutdown(absl::ToChronoTime(clock.Now()));
      return started.status();
    }
    exposer = std::move(*started);
  }
  server->GetHealthCheckService()->SetServingStatus(true);

  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : kDiagdSignals) sigaddset(&signals, sig);
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  SPDLOG_INFO("received {}; stopping", received == SIGTERM ? "SIGTERM" : "SIGINT");

  server->GetHealthCheckService()->SetServingStatus(false);
  // Ends the coordinated tests in flight: their calls then finish at once.
  engine->Stop();
  (*acceptor)->Stop();
  server->Shutdown(absl::ToChronoTime(clock.Now() + kShutdownGrace));
  watch.Stop();
  exposer.reset();
  // The socket goes with the server; the lock goes last, so a successor
  // binds only once this one is gone.
  unlink(options.socket_path.c_str());
  socket_lock.reset();
  SPDLOG_INFO("stopped");
  return absl::OkStatus();
}

}  // namespace rocenet::diagd
