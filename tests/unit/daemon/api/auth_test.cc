// SPDX-License-Identifier: Apache-2.0
// The access table, the access decision, the rate limit and the string
// bounds of daemon/api/auth.h, and that every rocenet.v1 handler consults
// the gate before it does anything.
#include "daemon/api/auth.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "daemon/api/addressing_service.h"
#include "daemon/api/attachments_service.h"
#include "daemon/api/health_service.h"
#include "daemon/api/lifecycle_service.h"
#include "daemon/api/port_discovery_service.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "rocenet/v1/addressing.pb.h"
#include "rocenet/v1/attach.pb.h"
#include "rocenet/v1/diagnostics.pb.h"
#include "rocenet/v1/health.pb.h"
#include "rocenet/v1/ports.pb.h"
#include "rocenet/v1/reservations.pb.h"
#include "rocenet/v1/uninstall.pb.h"
#include "tests/unit/daemon/api/fake_node_state.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::api {
namespace {

using ::testing::HasSubstr;

Caller UnixCaller(uid_t uid, gid_t gid, std::vector<gid_t> groups = {}) {
  Caller caller;
  caller.via = Caller::Via::kUnixSocket;
  caller.uid = uid;
  caller.gid = gid;
  caller.groups = std::move(groups);
  caller.description = absl::StrCat("uid ", uid);
  return caller;
}

Caller TlsCaller(bool verified) {
  Caller caller;
  caller.via = Caller::Via::kTls;
  caller.verified_client_cert = verified;
  caller.description = "ipv4:192.0.2.7:5000";
  return caller;
}

AccessConfig ReadGroup(gid_t gid) {
  return AccessConfig{.read_gid = gid, .read_group_name = "rocenet-read"};
}

constexpr const char* kReconcile = "/rocenet.v1.Addressing/Reconcile";
constexpr const char* kListPorts = "/rocenet.v1.PortDiscovery/ListPorts";

// Every method of every rocenet.v1 service (one .proto each under
// proto/rocenet/v1) has an access rule, and every rule names a method that
// exists.
TEST(RpcTableTest, EveryMethodOfTheApiIsClassified) {
  // One message of each file links that file's descriptors into this test,
  // whatever the linker would otherwise leave out of a static library.
  for (const google::protobuf::Descriptor* linked :
       {v1::PortCounters::descriptor(), v1::Condition::descriptor(), v1::Route::descriptor(),
        v1::PodIdentity::descriptor(), v1::StagePath::descriptor(), v1::Reservation::descriptor(),
        v1::UninstallItem::descriptor()}) {
    ASSERT_NE(linked, nullptr);
  }
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  int methods = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ROCENET_PROTO_DIR "/rocenet/v1")) {
    if (entry.path().extension() != ".proto") continue;
    const std::string name = "rocenet/v1/" + entry.path().filename().string();
    const google::protobuf::FileDescriptor* file = pool->FindFileByName(name);
    ASSERT_NE(file, nullptr) << name
                             << " is not linked into this test: name one of its "
                                "messages at the top of this test";
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int m = 0; m < service->method_count(); ++m) {
        const std::string method =
            absl::StrCat("/", service->full_name(), "/", service->method(m)->name());
        EXPECT_TRUE(KindOf(method).has_value())
            << method << " has no access rule: add it to RpcTable() in daemon/api/auth.cc";
        ++methods;
      }
    }
  }
  EXPECT_GE(methods, 15);
  for (const RpcRule& rule : RpcTable()) {
    const std::string method = rule.method;
    const size_t slash = method.rfind('/');
    const google::protobuf::ServiceDescriptor* service =
        pool->FindServiceByName(method.substr(1, slash - 1));
    ASSERT_NE(service, nullptr) << rule.method << " is in the table but its service is not";
    EXPECT_NE(service->FindMethodByName(method.substr(slash + 1)), nullptr)
        << rule.method << " is in the table but not in the API";
  }
}

TEST(RpcTableTest, ChangingCallsAreMutating) {
  for (const char* method :
       {kReconcile, "/rocenet.v1.Attachments/Attach", "/rocenet.v1.Attachments/Detach",
        "/rocenet.v1.Attachments/Gc", "/rocenet.v1.Reservations/Reserve",
        "/rocenet.v1.Reservations/Release", "/rocenet.v1.Lifecycle/Uninstall"}) {
    EXPECT_EQ(KindOf(method), RpcKind::kMutate) << method;
  }
  for (const char* method :
       {kListPorts, "/rocenet.v1.Health/WatchHealth", "/rocenet.v1.Addressing/ListPlans",
        "/rocenet.v1.Attachments/List", "/rocenet.v1.Reservations/List"}) {
    EXPECT_EQ(KindOf(method), RpcKind::kRead) << method;
  }
}

TEST(DecideAccessTest, RootMayCallEverything) {
  for (const RpcRule& rule : RpcTable()) {
    EXPECT_OK(DecideAccess(UnixCaller(0, 0), rule.method, {})) << rule.method;
  }
}

TEST(DecideAccessTest, NonRootMayNotChangeTheNodeEvenInTheReadGroup) {
  absl::Status s = DecideAccess(UnixCaller(1000, 500), kReconcile, ReadGroup(500));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("rocenet.v1.Addressing/Reconcile"));
  EXPECT_THAT(s.message(), HasSubstr("uid 1000"));
}

TEST(DecideAccessTest, ReadGroupByPrimaryOrSupplementaryGroupMayRead) {
  EXPECT_OK(DecideAccess(UnixCaller(1000, 500), kListPorts, ReadGroup(500)));
  EXPECT_OK(DecideAccess(UnixCaller(1000, 100, {20, 500}), kListPorts, ReadGroup(500)));
  absl::Status other = DecideAccess(UnixCaller(1000, 100, {20}), kListPorts, ReadGroup(500));
  EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(other.message(), HasSubstr("rocenet-read"));
  absl::Status none = DecideAccess(UnixCaller(1000, 500), kListPorts, {});
  EXPECT_EQ(none.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(none.message(), HasSubstr("uid 1000"));
}

TEST(DecideAccessTest, TlsCallersChangeOnlyWithAVerifiedClientCertificate) {
  EXPECT_OK(DecideAccess(TlsCaller(false), kListPorts, {}));
  EXPECT_OK(DecideAccess(TlsCaller(true), kReconcile, {}));
  absl::Status s = DecideAccess(TlsCaller(false), kReconcile, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("client certificate"));
}

TEST(DecideAccessTest, UnknownTransportOrMethodIsRefused) {
  Caller unknown;
  unknown.description = "unix:/x";
  EXPECT_EQ(DecideAccess(unknown, kListPorts, {}).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(DecideAccess(UnixCaller(0, 0), "/rocenet.v1.Addressing/Nope", {}).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(TokenBucketTest, BurstThenRate) {
  const os::BootTime t0 = os::BootTime::SinceBoot(absl::Seconds(1000));
  TokenBucket bucket(/*rate=*/2, /*burst=*/3, t0);
  EXPECT_TRUE(bucket.TryTake(t0));
  EXPECT_TRUE(bucket.TryTake(t0));
  EXPECT_TRUE(bucket.TryTake(t0));
  EXPECT_FALSE(bucket.TryTake(t0));
  EXPECT_TRUE(bucket.TryTake(t0 + absl::Milliseconds(500)));
  EXPECT_FALSE(bucket.TryTake(t0 + absl::Milliseconds(500)));
  // Never more than the burst, however long it rests.
  const os::BootTime later = t0 + absl::Hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.TryTake(later));
  EXPECT_FALSE(bucket.TryTake(later));
}

TEST(CheckStringLengthsTest, NamesTheNestedOrRepeatedField) {
  v1::AttachRequest attach;
  attach.set_container_id("c1");
  attach.mutable_pod()->set_name(std::string(65, 'x'));
  absl::Status s = CheckStringLengths(attach, 64);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("pod.name: 65 bytes, more than 64"));
  attach.mutable_pod()->set_name(std::string(64, 'x'));
  EXPECT_OK(CheckStringLengths(attach, 64));

  v1::GcRequest gc;
  gc.add_valid_container_ids("a");
  gc.add_valid_container_ids(std::string(100, 'b'));
  EXPECT_THAT(CheckStringLengths(gc, 64).message(), HasSubstr("valid_container_ids[1]"));
}

TEST(RequestGateTest, RateLimitsOnlyChangingCalls) {
  os::BootTime now = os::BootTime::SinceBoot(absl::Seconds(1000));
  GateConfig config;
  config.mutating_rpcs_per_second = 1;
  config.mutating_rpc_burst = 2;
  RequestGate gate([](const grpc::ServerContext&) { return Caller(); }, config,
                   [&] { return now; });
  const Caller root = UnixCaller(0, 0);
  v1::ReconcileRequest reconcile;
  EXPECT_OK(gate.AdmitCaller(root, kReconcile, reconcile));
  EXPECT_OK(gate.AdmitCaller(root, kReconcile, reconcile));
  absl::Status s = gate.AdmitCaller(root, kReconcile, reconcile);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("rocenet.v1.Addressing/Reconcile"));
  v1::ListPortsRequest list;
  for (int i = 0; i < 100; ++i) EXPECT_OK(gate.AdmitCaller(root, kListPorts, list));
  now += absl::Seconds(1);
  EXPECT_OK(gate.AdmitCaller(root, kReconcile, reconcile));
}

TEST(RequestGateTest, ReconfigureTakesANewReadGroupAndStringBound) {
  GateConfig config;
  RequestGate gate([](const grpc::ServerContext&) { return Caller(); }, config,
                   [] { return os::BootTime(); });
  const Caller user = UnixCaller(1000, 500);
  v1::GetPortRequest request;
  request.set_port("so0");
  EXPECT_EQ(gate.AdmitCaller(user, "/rocenet.v1.PortDiscovery/GetPort", request).code(),
            absl::StatusCode::kPermissionDenied);
  config.access = ReadGroup(500);
  config.max_string_bytes = 2;
  gate.Reconfigure(config);
  absl::Status s = gate.AdmitCaller(user, "/rocenet.v1.PortDiscovery/GetPort", request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("port: 3 bytes"));
  request.set_port("s0");
  EXPECT_OK(gate.AdmitCaller(user, "/rocenet.v1.PortDiscovery/GetPort", request));
}

// An AttachmentsBackend that must never be reached.
class UnreachableBackend final : public node::AttachmentsBackend {
 public:
  absl::StatusOr<attach::AttachmentRecord> Attach(const attach::AttachRequest&,
                                                  const std::string&) override {
    ADD_FAILURE() << "Attach ran although refused";
    return absl::InternalError("reached");
  }
  absl::StatusOr<bool> Detach(const std::string&, const std::string&) override {
    ADD_FAILURE() << "Detach ran although refused";
    return absl::InternalError("reached");
  }
  absl::StatusOr<attach::AttachmentRecord> Check(const std::string&, const std::string&,
                                                 const std::string&) override {
    ADD_FAILURE() << "Check ran although refused";
    return absl::InternalError("reached");
  }
  absl::StatusOr<std::vector<attach::AttachmentRecord>> ListAttachments() override {
    ADD_FAILURE() << "List ran although refused";
    return absl::InternalError("reached");
  }
  absl::StatusOr<std::vector<attach::AttachmentRecord>> Gc(const std::string&,
                                                           const std::vector<std::string>&,
                                                           bool) override {
    ADD_FAILURE() << "Gc ran although refused";
    return absl::InternalError("reached");
  }
};

// Counts the uninstalls that got past the gate: none may.
class CountingLifecycle final : public node::LifecycleBackend {
 public:
  absl::StatusOr<RemovalReport> Uninstall() override {
    ++calls;
    return RemovalReport{};
  }
  std::atomic<int> calls{0};
};

// Every handler of the five node services asks the gate first: a caller
// the gate refuses gets PERMISSION_DENIED from each method, and nothing runs.
TEST(ServiceGateTest, EveryHandlerIsGated) {
  testing::FakeNodeState node(testing::SampleSnapshot());
  UnreachableBackend backend;
  RequestGate gate([](const grpc::ServerContext&) { return UnixCaller(65534, 65534); },
                   GateConfig{}, [] { return os::BootTime(); });
  PortDiscoveryService ports(&node, &gate);
  HealthService health(&node, &gate);
  AddressingService addressing(&node, &gate);
  AttachmentsService attachments(&backend, &gate);
  CountingLifecycle uninstalls;
  LifecycleService lifecycle(&uninstalls, &gate);
  grpc::ServerBuilder builder;
  builder.RegisterService(&ports);
  builder.RegisterService(&health);
  builder.RegisterService(&addressing);
  builder.RegisterService(&attachments);
  builder.RegisterService(&lifecycle);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto channel = server->InProcessChannel(grpc::ChannelArguments());
  auto ports_stub = v1::PortDiscovery::NewStub(channel);
  auto health_stub = v1::Health::NewStub(channel);
  auto addressing_stub = v1::Addressing::NewStub(channel);
  auto attach_stub = v1::Attachments::NewStub(channel);
  auto lifecycle_stub = v1::Lifecycle::NewStub(channel);

  using Call = std::function<grpc::Status(grpc::ClientContext*)>;
  auto unary = [](auto* stub, auto method, auto request, auto response) -> Call {
    return [=](grpc::ClientContext* c) mutable { return (stub->*method)(c, request, &response); };
  };
  auto stream = [](auto* stub, auto method, auto request, auto response) -> Call {
    return [=](grpc::ClientContext* c) mutable {
      auto reader = (stub->*method)(c, request);
      while (reader->Read(&response)) {
      }
      return reader->Finish();
    };
  };
  using S = v1::PortDiscovery::Stub;
  using H = v1::Health::Stub;
  using A = v1::Addressing::Stub;
  using T = v1::Attachments::Stub;
  using L = v1::Lifecycle::Stub;
  const std::map<std::string, Call> calls = {
      {"/rocenet.v1.PortDiscovery/ListPorts",
       unary(ports_stub.get(), &S::ListPorts, v1::ListPortsRequest(), v1::ListPortsResponse())},
      {"/rocenet.v1.PortDiscovery/GetPort",
       unary(ports_stub.get(), &S::GetPort, v1::GetPortRequest(), v1::Port())},
      {"/rocenet.v1.PortDiscovery/WatchPorts",
       stream(ports_stub.get(), &S::WatchPorts, v1::WatchPortsRequest(), v1::PortSnapshot())},
      {"/rocenet.v1.PortDiscovery/ListNeighbors",
       unary(ports_stub.get(), &S::ListNeighbors, v1::ListNeighborsRequest(),
             v1::ListNeighborsResponse())},
      {"/rocenet.v1.Health/GetNodeHealth",
       unary(health_stub.get(), &H::GetNodeHealth, v1::GetNodeHealthRequest(), v1::NodeHealth())},
      {"/rocenet.v1.Health/GetPortHealth",
       unary(health_stub.get(), &H::GetPortHealth, v1::GetPortHealthRequest(), v1::PortHealth())},
      {"/rocenet.v1.Health/WatchHealth",
       stream(health_stub.get(), &H::WatchHealth, v1::WatchHealthRequest(), v1::NodeHealth())},
      {"/rocenet.v1.Addressing/ListPlans", unary(addressing_stub.get(), &A::ListPlans,
                                                 v1::ListPlansRequest(), v1::ListPlansResponse())},
      {"/rocenet.v1.Addressing/GetPlan",
       unary(addressing_stub.get(), &A::GetPlan, v1::GetPlanRequest(), v1::PortPlan())},
      {"/rocenet.v1.Addressing/Reconcile", unary(addressing_stub.get(), &A::Reconcile,
                                                 v1::ReconcileRequest(), v1::ListPlansResponse())},
      {"/rocenet.v1.Attachments/Attach",
       unary(attach_stub.get(), &T::Attach, v1::AttachRequest(), v1::Attachment())},
      {"/rocenet.v1.Attachments/Detach",
       unary(attach_stub.get(), &T::Detach, v1::DetachRequest(), v1::DetachResponse())},
      {"/rocenet.v1.Attachments/Check",
       unary(attach_stub.get(), &T::Check, v1::CheckRequest(), v1::Attachment())},
      {"/rocenet.v1.Attachments/List",
       unary(attach_stub.get(), &T::List, v1::ListAttachmentsRequest(),
             v1::ListAttachmentsResponse())},
      {"/rocenet.v1.Attachments/Gc",
       unary(attach_stub.get(), &T::Gc, v1::GcRequest(), v1::GcResponse())},
      {"/rocenet.v1.Lifecycle/Uninstall",
       unary(lifecycle_stub.get(), &L::Uninstall, v1::UninstallRequest(), v1::UninstallResponse())},
  };
  // Each method of the five services has a call here.
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const char* name : {"rocenet.v1.PortDiscovery", "rocenet.v1.Health", "rocenet.v1.Addressing",
                           "rocenet.v1.Attachments", "rocenet.v1.Lifecycle"}) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int m = 0; m < service->method_count(); ++m) {
      const std::string method =
          absl::StrCat("/", service->full_name(), "/", service->method(m)->name());
      ASSERT_TRUE(calls.contains(method)) << "add a call of " << method << " to this test";
    }
  }
  for (const auto& [method, call] : calls) {
    grpc::ClientContext context;
    grpc::Status status = call(&context);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << method;
    EXPECT_THAT(status.error_message(), HasSubstr(method.substr(1))) << method;
    EXPECT_THAT(status.error_message(), HasSubstr("uid 65534")) << method;
  }
  EXPECT_EQ(node.reconciles(), 0);
  EXPECT_EQ(uninstalls.calls, 0);
  server->Shutdown();
}

}  // namespace
}  // namespace rocenet::api
