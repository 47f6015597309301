#include "plugins/device/daemon_watch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/logging.h"
#include "rocenet/v1/addressing.grpc.pb.h"
#include "rocenet/v1/health.grpc.pb.h"
#include "rocenet/v1/ports.grpc.pb.h"

namespace rocenet::device {
namespace {

absl::Status FromGrpc(const grpc::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

// The rail of a port: the networks its plan routes to (where its traffic
// goes) and the switch LLDP found behind it (what it fails with).
std::string RailOf(const rocenet::v1::PortPlan* plan, const rocenet::v1::PortNeighbors* nbrs) {
  std::vector<std::string> parts;
  if (plan != nullptr) {
    std::vector<std::string> routes;
    for (const auto& r : plan->routes()) routes.push_back(r.destination());
    std::sort(routes.begin(), routes.end());
    parts.push_back(absl::StrJoin(routes, ","));
  }
  if (nbrs != nullptr && !nbrs->neighbors().empty()) {
    parts.push_back(nbrs->neighbors(0).chassis_id().value());
  }
  return absl::StrJoin(parts, "|");
}

}  // namespace

DaemonWatch::DaemonWatch(DaemonWatchOptions options, DeviceState* state)
    : options_(std::move(options)), state_(state) {}

DaemonWatch::~DaemonWatch() { Stop(); }

void DaemonWatch::Start() { thread_ = std::thread([this] { Run(); }); }

void DaemonWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (active_ != nullptr) active_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool DaemonWatch::SleepFor(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), d);
  return !stopping_;
}

void DaemonWatch::Run() {
  absl::Duration backoff = options_.initial_backoff;
  absl::Time lost_since = absl::Now();  // not yet reached counts as lost
  bool lost_reported = false;
  while (true) {
    if (WatchOnce()) {
      backoff = options_.initial_backoff;
      lost_since = absl::Now();
      lost_reported = false;
      SPDLOG_WARN("rocenetd at {}: health watch ended; reconnecting", options_.socket);
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    absl::Time grace_end = lost_since + options_.grace;
    absl::Duration wait = backoff;
    if (!lost_reported) wait = std::min(wait, std::max(grace_end - absl::Now(), absl::ZeroDuration()));
    if (!SleepFor(wait)) return;
    if (!lost_reported && absl::Now() >= grace_end) {
      SPDLOG_ERROR("rocenetd at {} unreachable for {}: every device is Unhealthy",
                   options_.socket, absl::FormatDuration(options_.grace));
      state_->SetDaemonLost();
      lost_reported = true;
    }
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool DaemonWatch::WatchOnce() {
  auto channel = grpc::CreateChannel("unix:" + options_.socket, grpc::InsecureChannelCredentials());
  auto discovery = rocenet::v1::PortDiscovery::NewStub(channel);
  grpc::ClientContext ctx;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    active_ = &ctx;
  }
  bool got_any = false;
  // WatchPorts, not WatchHealth: every change of the node is a snapshot,
  // an address that moved without touching health too (HCL's files follow
  // it).
  auto reader = discovery->WatchPorts(&ctx, rocenet::v1::WatchPortsRequest());
  rocenet::v1::PortSnapshot snapshot;
  while (reader->Read(&snapshot)) {
    absl::StatusOr<PortMap> ports = FetchPorts(channel, snapshot);
    if (!ports.ok()) {
      SPDLOG_WARN("rocenetd at {}: {}", options_.socket, ports.status().message());
      ctx.TryCancel();
      break;
    }
    if (!got_any) SPDLOG_INFO("rocenetd at {}: watching {} port(s)", options_.socket, ports->size());
    got_any = true;
    state_->Update(*std::move(ports));
  }
  grpc::Status status = reader->Finish();
  {
    absl::MutexLock lock(&mu_);
    active_ = nullptr;
  }
  if (!got_any) SPDLOG_DEBUG("rocenetd at {}: {}", options_.socket, status.error_message());
  return got_any;
}

absl::StatusOr<PortMap> DaemonWatch::FetchPorts(const std::shared_ptr<grpc::Channel>& channel,
                                                const rocenet::v1::PortSnapshot& ports) {
  auto deadline = [this] {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() +
                      absl::ToChronoMilliseconds(options_.rpc_timeout));
    return ctx;
  };
  rocenet::v1::NodeHealth health;
  auto discovery = rocenet::v1::PortDiscovery::NewStub(channel);
  if (absl::Status s = FromGrpc(rocenet::v1::Health::NewStub(channel)->GetNodeHealth(
                                    deadline().get(), rocenet::v1::GetNodeHealthRequest(), &health),
                                "GetNodeHealth");
      !s.ok()) {
    return s;
  }
  // Plans and neighbors only refine the rails and gaudinet.json: without
  // them the ports are still listed.
  rocenet::v1::ListPlansResponse plans;
  grpc::Status plans_status = rocenet::v1::Addressing::NewStub(channel)->ListPlans(
      deadline().get(), rocenet::v1::ListPlansRequest(), &plans);
  rocenet::v1::ListNeighborsResponse neighbors;
  grpc::Status neighbors_status = discovery->ListNeighbors(
      deadline().get(), rocenet::v1::ListNeighborsRequest(), &neighbors);
  if (!plans_status.ok() || !neighbors_status.ok()) {
    SPDLOG_DEBUG("rocenetd: plans: {}; neighbors: {}", plans_status.error_message(),
                 neighbors_status.error_message());
  }

  std::map<std::string, const rocenet::v1::PortPlan*> plan_by_id;
  for (const auto& p : plans.plans()) plan_by_id[p.port_id()] = &p;
  std::map<std::string, const rocenet::v1::PortNeighbors*> nbrs_by_id;
  for (const auto& n : neighbors.ports()) nbrs_by_id[n.port_id()] = &n;
  std::map<std::string, bool> healthy;
  for (const auto& h : health.ports()) healthy[h.port_id()] = h.healthy();

  PortMap out;
  for (const auto& p : ports.ports()) {
    PortInfo info;
    info.id = p.id();
    info.name = p.name();
    info.pci_address = p.pci_address();
    info.mac = p.mac();
    info.numa_node = p.numa_node();
    info.module_id = p.module_id();
    info.port_index = p.port_index();
    info.gaudi = p.discovery() == rocenet::v1::DISCOVERY_GAUDI_SYSFS;
    info.attached_to = p.attached_to();
    if (p.has_rdma()) {
      info.rdma_device = p.rdma().device();
      info.uverbs = p.rdma().uverbs();
      info.gid_index = p.rdma().gid_index();
    }
    info.l2 = plans_status.ok() && plans.mode() == "L2";
    info.present = p.present();
    auto h = healthy.find(p.id());
    info.healthy = h != healthy.end() && h->second;
    auto plan = plan_by_id.find(p.id());
    const rocenet::v1::PortPlan* pl = plan == plan_by_id.end() ? nullptr : plan->second;
    auto nb = nbrs_by_id.find(p.id());
    // rocenetd's rail (scale-out order in the module) where it knows one;
    // the routed network and switch for ports without a module.
    info.rail = p.rail() >= 0 ? absl::StrCat("rail ", p.rail())
                              : RailOf(pl, nb == nbrs_by_id.end() ? nullptr : nb->second);
    // Only a ready plan's address is one HCL may use: a refused or waiting
    // port has none it can count on.
    if (pl != nullptr && pl->state() == rocenet::v1::PLAN_STATE_READY) {
      info.local = pl->local();
      info.gateway_mac = pl->gateway_mac();
    }
    out[info.id] = std::move(info);
  }
  return out;
}

}  // namespace rocenet::device
