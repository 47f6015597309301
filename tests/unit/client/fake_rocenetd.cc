// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/client/fake_rocenetd.h"

#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl::testutil {
namespace {

google::protobuf::Timestamp At(absl::Time time) {
  google::protobuf::Timestamp stamp;
  stamp.set_seconds(absl::ToUnixSeconds(time));
  return stamp;
}

v1::Port SamplePort(int index, bool carrier) {
  v1::Port port;
  port.set_id(absl::StrCat("0000:33:00.0-p", index));
  port.set_name(absl::StrCat("so", index));
  port.set_present(true);
  port.set_ifindex(10 + index);
  port.set_mac(absl::StrCat("b0:fd:0b:00:00:0", index));
  port.set_permanent_mac(port.mac());
  port.set_mtu(8000);
  port.set_admin_up(true);
  port.set_carrier(carrier);
  port.set_oper_state(carrier ? v1::OPER_STATE_UP : v1::OPER_STATE_DOWN);
  port.set_speed_mbps(carrier ? 100000 : 0);
  port.set_pci_address("0000:33:00.0");
  port.set_pcie_root("pci0000:16");
  port.set_numa_node(0);
  port.set_module_id(3);
  port.set_port_index(index);
  port.set_rail(index);
  port.set_driver("habanalabs");
  port.set_discovery(v1::DISCOVERY_GAUDI_SYSFS);
  return port;
}

template <typename Message>
const Message* FindPort(const google::protobuf::RepeatedPtrField<Message>& ports,
                        const std::string& wanted) {
  for (const Message& port : ports) {
    if constexpr (std::is_same_v<Message, v1::Port>) {
      if (port.id() == wanted || port.name() == wanted) return &port;
    } else {
      if (port.port_id() == wanted || port.name() == wanted) return &port;
    }
  }
  return nullptr;
}

v1::Neighbor Leaf1(absl::Time now) {
  v1::Neighbor neighbor;
  neighbor.mutable_chassis_id()->set_subtype("MacAddress");
  neighbor.mutable_chassis_id()->set_value("02:5e:00:ff:00:01");
  neighbor.mutable_port_id()->set_subtype("InterfaceName");
  neighbor.mutable_port_id()->set_value("Ethernet1/1");
  neighbor.set_ttl_seconds(120);
  neighbor.add_port_descriptions("no-alert 10.200.1.2/30");
  neighbor.add_system_names("leaf1");
  neighbor.mutable_capabilities()->add_supported("Bridge");
  neighbor.mutable_capabilities()->add_supported("Router");
  neighbor.mutable_capabilities()->add_enabled("Router");
  v1::LldpManagementAddress* address = neighbor.add_management_addresses();
  address->set_family(1);
  address->set_address("10.0.0.1");
  neighbor.mutable_pfc()->set_capability(8);
  neighbor.mutable_pfc()->add_enabled_priorities(3);
  neighbor.set_max_frame_size(9216);
  neighbor.set_source_mac("02:5e:00:ff:00:01");
  *neighbor.mutable_first_seen() = At(now - absl::Minutes(10));
  *neighbor.mutable_last_seen() = At(now - absl::Seconds(20));
  *neighbor.mutable_expires() = At(now + absl::Seconds(100));
  neighbor.set_frames(21);
  return neighbor;
}

grpc::Status NotFound(const std::string& port) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("no port ", port));
}

}  // namespace

FakeData SampleNode(absl::Time now) {
  FakeData data;
  *data.ports.add_ports() = SamplePort(1, /*carrier=*/true);
  *data.ports.add_ports() = SamplePort(2, /*carrier=*/false);

  v1::NodeHealth& health = data.health;
  health.set_ready(false);
  health.set_ports_total(2);
  health.set_ports_healthy(1);
  health.set_generation(7);
  v1::PortHealth* so1 = health.add_ports();
  so1->set_port_id("0000:33:00.0-p1");
  so1->set_name("so1");
  so1->set_healthy(true);
  *so1->mutable_since() = At(now - absl::Hours(2));
  v1::PortHealth* so2 = health.add_ports();
  so2->set_port_id("0000:33:00.0-p2");
  so2->set_name("so2");
  so2->set_healthy(false);
  *so2->mutable_since() = At(now - absl::Minutes(5));
  v1::Condition* down = so2->add_conditions();
  down->set_type("LinkDown");
  down->set_reason("CarrierLost");
  down->set_message("port so2: no carrier");
  *down->mutable_since() = so2->since();

  v1::PortNeighbors* heard = data.neighbors.add_ports();
  heard->set_port_id("0000:33:00.0-p1");
  heard->set_name("so1");
  heard->set_neighbor_count(1);
  heard->set_ever_seen(true);
  *heard->add_neighbors() = Leaf1(now);
  v1::PortNeighbors* lost = data.neighbors.add_ports();
  lost->set_port_id("0000:33:00.0-p2");
  lost->set_name("so2");
  lost->set_ever_seen(true);
  lost->set_lost("AgedOut");
  *lost->mutable_lost_at() = At(now - absl::Minutes(5));
  lost->set_ageouts(1);

  data.plans.set_mode("L3");
  v1::PortPlan* ready = data.plans.add_plans();
  ready->set_port_id("0000:33:00.0-p1");
  ready->set_name("so1");
  ready->set_state(v1::PLAN_STATE_READY);
  ready->set_description("no-alert 10.200.1.2/30");
  ready->set_local("10.200.1.1/30");
  ready->set_peer("10.200.1.2");
  v1::Route* route = ready->add_routes();
  route->set_destination("10.200.0.0/16");
  route->set_gateway("10.200.1.2");
  ready->set_mtu(8000);
  ready->set_gateway_mac("02:5e:00:ff:00:01");
  ready->set_provisioned(true);
  v1::AppliedConfig* applied = ready->mutable_applied();
  applied->set_local("10.200.1.1/30");
  applied->set_peer("10.200.1.2");
  *applied->add_routes() = *route;
  applied->set_mtu(8000);
  v1::PortPlan* pending = data.plans.add_plans();
  pending->set_port_id("0000:33:00.0-p2");
  pending->set_name("so2");
  pending->set_state(v1::PLAN_STATE_PENDING);
  pending->set_reason("NoLldpNeighbor");
  pending->set_message("port so2: no LLDP neighbor");
  return data;
}

class FakeRocenetd::Ports final : public v1::PortDiscovery::Service {
 public:
  Ports(const FakeData& data, absl::Notification& stop) : data_(data), stop_(stop) {}

  grpc::Status ListPorts(grpc::ServerContext*, const v1::ListPortsRequest*,
                         v1::ListPortsResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    *response = data_.ports;
    return grpc::Status::OK;
  }

  grpc::Status GetPort(grpc::ServerContext*, const v1::GetPortRequest* request,
                       v1::Port* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    const v1::Port* port = FindPort(data_.ports.ports(), request->port());
    if (port == nullptr) return NotFound(request->port());
    *response = *port;
    return grpc::Status::OK;
  }

  grpc::Status ListNeighbors(grpc::ServerContext*, const v1::ListNeighborsRequest* request,
                             v1::ListNeighborsResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    if (request->port().empty()) {
      *response = data_.neighbors;
      return grpc::Status::OK;
    }
    const v1::PortNeighbors* port = FindPort(data_.neighbors.ports(), request->port());
    if (port == nullptr) return NotFound(request->port());
    *response->add_ports() = *port;
    return grpc::Status::OK;
  }

 private:
  const FakeData& data_;
  absl::Notification& stop_;
};

class FakeRocenetd::Health final : public v1::Health::Service {
 public:
  Health(const FakeData& data, absl::Notification& stop) : data_(data), stop_(stop) {}

  grpc::Status GetNodeHealth(grpc::ServerContext*, const v1::GetNodeHealthRequest*,
                             v1::NodeHealth* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    *response = data_.health;
    return grpc::Status::OK;
  }

  grpc::Status GetPortHealth(grpc::ServerContext*, const v1::GetPortHealthRequest* request,
                             v1::PortHealth* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    const v1::PortHealth* port = FindPort(data_.health.ports(), request->port());
    if (port == nullptr) return NotFound(request->port());
    *response = *port;
    return grpc::Status::OK;
  }

  grpc::Status WatchHealth(grpc::ServerContext* context, const v1::WatchHealthRequest*,
                           grpc::ServerWriter<v1::NodeHealth>* writer) override {
    if (!writer->Write(data_.health)) return grpc::Status::OK;
    for (const v1::NodeHealth& update : data_.health_updates) {
      if (stop_.WaitForNotificationWithTimeout(data_.watch_interval)) return grpc::Status::OK;
      if (context->IsCancelled() || !writer->Write(update)) return grpc::Status::OK;
    }
    while (!context->IsCancelled() &&
           !stop_.WaitForNotificationWithTimeout(absl::Milliseconds(10))) {
    }
    return grpc::Status::OK;
  }

 private:
  const FakeData& data_;
  absl::Notification& stop_;
};

class FakeRocenetd::Addressing final : public v1::Addressing::Service {
 public:
  Addressing(const FakeData& data, absl::Notification& stop, std::atomic<int>& reconciles)
      : data_(data), stop_(stop), reconciles_(reconciles) {}

  grpc::Status ListPlans(grpc::ServerContext*, const v1::ListPlansRequest*,
                         v1::ListPlansResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    *response = data_.plans;
    return grpc::Status::OK;
  }

  grpc::Status GetPlan(grpc::ServerContext*, const v1::GetPlanRequest* request,
                       v1::PortPlan* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    const v1::PortPlan* plan = FindPort(data_.plans.plans(), request->port());
    if (plan == nullptr) return NotFound(request->port());
    *response = *plan;
    return grpc::Status::OK;
  }

  grpc::Status Reconcile(grpc::ServerContext*, const v1::ReconcileRequest*,
                         v1::ListPlansResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    ++reconciles_;
    *response = data_.plans;
    return grpc::Status::OK;
  }

 private:
  const FakeData& data_;
  absl::Notification& stop_;
  std::atomic<int>& reconciles_;
};

class FakeRocenetd::Attachments final : public v1::Attachments::Service {
 public:
  Attachments(const FakeData& data, absl::Notification& stop) : data_(data), stop_(stop) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListAttachmentsRequest*,
                    v1::ListAttachmentsResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    *response = data_.attachments;
    return grpc::Status::OK;
  }

 private:
  const FakeData& data_;
  absl::Notification& stop_;
};

class FakeRocenetd::Reservations final : public v1::Reservations::Service {
 public:
  Reservations(const FakeData& data, absl::Notification& stop) : data_(data), stop_(stop) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListReservationsRequest*,
                    v1::ListReservationsResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    *response = data_.reservations;
    return grpc::Status::OK;
  }

 private:
  const FakeData& data_;
  absl::Notification& stop_;
};

class FakeRocenetd::Lifecycle final : public v1::Lifecycle::Service {
 public:
  Lifecycle(const FakeData& data, absl::Notification& stop, std::atomic<int>& calls)
      : data_(data), stop_(stop), calls_(calls) {}

  grpc::Status Uninstall(grpc::ServerContext*, const v1::UninstallRequest*,
                         v1::UninstallResponse* response) override {
    stop_.WaitForNotificationWithTimeout(data_.delay);
    ++calls_;
    *response = data_.uninstall;
    return grpc::Status::OK;
  }

 private:
  const FakeData& data_;
  absl::Notification& stop_;
  std::atomic<int>& calls_;
};

FakeRocenetd::FakeRocenetd(FakeData data)
    : data_(std::move(data)),
      ports_(std::make_unique<Ports>(data_, shutting_down_)),
      health_(std::make_unique<Health>(data_, shutting_down_)),
      addressing_(std::make_unique<Addressing>(data_, shutting_down_, reconcile_calls_)),
      attachments_(std::make_unique<Attachments>(data_, shutting_down_)),
      reservations_(std::make_unique<Reservations>(data_, shutting_down_)),
      lifecycle_(std::make_unique<Lifecycle>(data_, shutting_down_, uninstall_calls_)) {}

std::unique_ptr<FakeRocenetd> FakeRocenetd::Start(const std::string& socket_path, FakeData data) {
  std::unique_ptr<FakeRocenetd> fake(new FakeRocenetd(std::move(data)));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", socket_path), grpc::InsecureServerCredentials());
  builder.RegisterService(fake->ports_.get());
  builder.RegisterService(fake->health_.get());
  builder.RegisterService(fake->addressing_.get());
  builder.RegisterService(fake->attachments_.get());
  builder.RegisterService(fake->reservations_.get());
  builder.RegisterService(fake->lifecycle_.get());
  fake->server_ = builder.BuildAndStart();
  if (fake->server_ == nullptr) {
    ADD_FAILURE() << "cannot serve on " << socket_path;
    return nullptr;
  }
  return fake;
}

FakeRocenetd::~FakeRocenetd() {
  shutting_down_.Notify();
  if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
}

}  // namespace rocenet::rocectl::testutil
