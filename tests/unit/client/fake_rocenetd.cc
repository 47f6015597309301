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

 private:
  const FakeData& data_;
  absl::Notification& stop_;
};

FakeRocenetd::FakeRocenetd(FakeData data)
    : data_(std::move(data)),
      ports_(std::make_unique<Ports>(data_, shutting_down_)),
      health_(std::make_unique<Health>(data_, shutting_down_)) {}

std::unique_ptr<FakeRocenetd> FakeRocenetd::Start(const std::string& socket_path, FakeData data) {
  std::unique_ptr<FakeRocenetd> fake(new FakeRocenetd(std::move(data)));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", socket_path), grpc::InsecureServerCredentials());
  builder.RegisterService(fake->ports_.get());
  builder.RegisterService(fake->health_.get());
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
