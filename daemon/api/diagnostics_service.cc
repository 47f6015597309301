// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/diagnostics_service.h"

#include <unistd.h>

#include <cstdlib>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/api/metrics_diag.h"
#include "daemon/api/status_convert.h"
#include "daemon/common/logging.h"
#include "daemon/diag/limits.h"

namespace rocenet::api {

std::string DiagNodeName(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0') return env;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return host;
  return "unknown";
}

diag::PortsSource DiagPortsOf(NodeStateSource* source) {
  return [source]() -> absl::StatusOr<std::vector<diag::LocalPort>> {
    absl::StatusOr<std::shared_ptr<const NodeSnapshot>> snapshot = source->Sample();
    if (!snapshot.ok()) return snapshot.status();
    return LocalPortsOf(**snapshot);
  };
}

std::vector<diag::LocalPort> LocalPortsOf(const NodeSnapshot& snapshot) {
  std::vector<diag::LocalPort> out;
  for (const addressing::PortAddressing& a : snapshot.addressing) {
    const inventory::Port* port = nullptr;
    for (const inventory::Port& p : snapshot.ports) {
      if (p.id == a.port_id) port = &p;
    }
    if (port == nullptr || !port->present || !port->attached_to.empty()) continue;
    diag::LocalPort local;
    std::vector<addressing::Route> routes;
    if (a.plan.state == addressing::PlanState::kReady && a.plan.local && a.plan.peer) {
      local.address = *a.plan.local;
      local.gateway = *a.plan.peer;
      routes = a.plan.routes;
    } else if (a.applied && a.applied->local && a.applied->peer) {
      local.address = *a.applied->local;
      local.gateway = *a.applied->peer;
      routes = a.applied->routes;
    } else {
      continue;
    }
    local.name = port->name;
    local.ifindex = port->link.ifindex;
    local.rail = routes.empty() ? local.address.Network() : routes.front().destination;
    local.up = port->link.carrier && port->link.admin_up;
    local.speed_mbps = port->link.speed_mbps;
    local.rx_dropped = port->link.stats.rx_dropped;
    local.tx_dropped = port->link.stats.tx_dropped;
    local.driver = !port->pci.netdev_driver.empty() ? port->pci.netdev_driver : port->pci.driver;
    local.netdev_is_control_path = port->discovery == inventory::Discovery::kGaudiSysfs ||
                                   port->pci.driver == "habanalabs";
    if (port->rdma) {
      local.rdma_device = port->rdma->device;
      local.rdma_port = port->rdma->port;
      local.gid_index = port->rdma->gid_index;
    }
    out.push_back(std::move(local));
  }
  return out;
}

DiagnosticsService::DiagnosticsService(NodeStateSource* source, diag::Diagnostics* diagnostics,
                                       DiagnosticsOptions options)
    : source_(source),
      gate_(options.gate),
      diagnostics_(diagnostics),
      metrics_(std::make_shared<DiagMetrics>(
          [diagnostics] { return diagnostics->PeerRefusals(); })) {}

DiagnosticsService::~DiagnosticsService() { Shutdown(); }

std::shared_ptr<prometheus::Collectable> DiagnosticsService::metrics() const { return metrics_; }

absl::Status DiagnosticsService::Start() {
  follower_ = std::thread([this] { FollowAddresses(); });
  return absl::OkStatus();
}

void DiagnosticsService::Shutdown() {
  stopping_ = true;
  if (follower_.joinable()) follower_.join();
}

void DiagnosticsService::FollowAddresses() {
  uint64_t seen = 0;
  while (!stopping_) {
    Broadcast<NodeSnapshot>::Versioned next =
        source_->changes().WaitNewer(seen, absl::Milliseconds(500));
    if (next.closed) return;
    if (next.value == nullptr) continue;
    seen = next.version;
    std::set<Ipv4Address> addresses;
    for (const diag::LocalPort& port : LocalPortsOf(*next.value)) {
      addresses.insert(port.address.address());
    }
    diagnostics_->SetAddresses(std::move(addresses));
  }
}

template <typename Event, typename Request, typename Result>
grpc::Status DiagnosticsService::Run(
    const grpc::ServerContext& context, absl::string_view method, const Request& request,
    grpc::ServerWriter<Event>* writer, absl::StatusOr<Request> (*normalize)(Request),
    absl::StatusOr<Result> (diag::Diagnostics::*run)(const Request&, const diag::Progress&),
    Result* (Event::*mutable_result)()) {
  if (grpc::Status admitted = Admit(gate_, context, method, request); !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<Request> normal = normalize(request);
  if (!normal.ok()) return ToGrpc(normal.status());
  if (!running_.TryLock()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "another diagnostic is running on this node; try again when it ends");
  }
  absl::Mutex write_mu;
  diag::Progress progress = [&](const std::string& message, double fraction) {
    Event event;
    event.mutable_progress()->set_message(message);
    event.mutable_progress()->set_fraction(fraction);
    absl::MutexLock lock(&write_mu);
    writer->Write(event);
  };
  absl::StatusOr<Result> result = (diagnostics_->*run)(*normal, progress);
  running_.Unlock();
  if (!result.ok()) return ToGrpc(result.status());
  metrics_->Record(*result);
  Event event;
  *(event.*mutable_result)() = *result;
  absl::MutexLock lock(&write_mu);
  writer->Write(event);
  return grpc::Status::OK;
}

grpc::Status DiagnosticsService::Reach(grpc::ServerContext* context,
                                       const v1::ReachRequest* request,
                                       grpc::ServerWriter<v1::ReachEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Reach", *request, writer, &diag::NormalizeReach,
             &diag::Diagnostics::Reach, &v1::ReachEvent::mutable_result);
}

grpc::Status DiagnosticsService::Bandwidth(grpc::ServerContext* context,
                                           const v1::BandwidthRequest* request,
                                           grpc::ServerWriter<v1::BandwidthEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Bandwidth", *request, writer,
             &diag::NormalizeBandwidth, &diag::Diagnostics::Bandwidth,
             &v1::BandwidthEvent::mutable_result);
}

grpc::Status DiagnosticsService::Allreduce(grpc::ServerContext* context,
                                           const v1::AllreduceRequest* request,
                                           grpc::ServerWriter<v1::AllreduceEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Allreduce", *request, writer,
             &diag::NormalizeAllreduce, &diag::Diagnostics::Allreduce,
             &v1::AllreduceEvent::mutable_result);
}

grpc::Status DiagnosticsService::Incast(grpc::ServerContext* context,
                                        const v1::IncastRequest* request,
                                        grpc::ServerWriter<v1::IncastEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Incast", *request, writer, &diag::NormalizeIncast,
             &diag::Diagnostics::Incast, &v1::IncastEvent::mutable_result);
}

grpc::Status DiagnosticsService::Rdma(grpc::ServerContext* context,
                                      const v1::RdmaRequest* request,
                                      grpc::ServerWriter<v1::RdmaEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Rdma", *request, writer, &diag::NormalizeRdma,
             &diag::Diagnostics::Rdma, &v1::RdmaEvent::mutable_result);
}

}  // namespace rocenet::api
