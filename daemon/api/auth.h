// SPDX-License-Identifier: Apache-2.0
// Who may call which rocenet RPC, how often, and with what input sizes.
//
// Every RPC of every rocenet.v1 service is classified in one table,
// RpcTable(): kRead (observes the node) or kMutate (changes ports, addresses,
// attachments). A unit test fails when a method of the API is missing from
// the table, so a new RPC cannot be served unclassified; an unclassified
// method is refused at run time too (fail closed).
//
// The decision, DecideAccess(), is a pure function of the caller and the
// method:
//   * unix socket: uid 0 may call everything; a caller whose gid or
//     supplementary groups hold the configured read group may call kRead
//     methods; everyone else is refused. The uid comes from the kernel
//     (SO_PEERCRED), never from the request.
//   * TCP with TLS: a caller that presented a client certificate the client
//     CA verified may call everything; a caller without one only kRead
//     methods. (Plaintext TCP is never served.)
//   * anything else: refused.
// Refusals are PERMISSION_DENIED naming the method and the caller.
//
// RequestGate puts the decision, a token bucket on kMutate calls
// (RESOURCE_EXHAUSTED when empty) and a length bound on every string field of
// the request (INVALID_ARGUMENT naming the field) in front of each handler:
// every service handler starts with Admit(). It is thread-safe; its
// configuration can be replaced while serving (SIGHUP reload).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/os/clock.h"
#include "google/protobuf/message.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace rocenet::api {

enum class RpcKind { kRead, kMutate };

struct RpcRule {
  // Full gRPC method name, "/package.Service/Method".
  const char* method;
  RpcKind kind;
};

// Every rocenet.v1 method and whether it changes the node.
const std::vector<RpcRule>& RpcTable();
std::optional<RpcKind> KindOf(absl::string_view method);

// The identity of the other end of a call, as the transport proved it.
struct Caller {
  enum class Via { kUnknown, kUnixSocket, kTls };
  Via via = Via::kUnknown;
  // kUnixSocket: from SO_PEERCRED / SO_PEERGROUPS.
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  // kTls: a client certificate was presented and verified against the CA.
  bool verified_client_cert = false;
  // For messages: "uid 1000", "192.0.2.7:5123 (CN=admin)".
  std::string description;
};

struct AccessConfig {
  // The group whose members may call kRead methods on the unix socket.
  std::optional<gid_t> read_gid;
  std::string read_group_name;
};

// OK or PERMISSION_DENIED naming `method` and the caller. Pure.
absl::Status DecideAccess(const Caller& caller, absl::string_view method,
                          const AccessConfig& config);

// Token bucket: `rate` tokens per second up to `burst`, on the boot clock
// (the wall clock set back would stop the refill for as long). Not
// thread-safe.
class TokenBucket {
 public:
  TokenBucket(double rate, double burst, os::BootTime now);
  // Takes one token if there is one.
  bool TryTake(os::BootTime now);
  void Reconfigure(double rate, double burst);

 private:
  double rate_;
  double burst_;
  double tokens_;
  os::BootTime last_;
};

// INVALID_ARGUMENT naming the first string (or bytes) field of `message`,
// nested and repeated ones included ("pod.name", "valid_container_ids[3]"),
// that is longer than `max_bytes`. Pure.
absl::Status CheckStringLengths(const google::protobuf::Message& message, size_t max_bytes);

// The default bound on every string field of a request.
inline constexpr size_t kDefaultMaxStringBytes = 4096;

struct GateConfig {
  AccessConfig access;
  double mutating_rpcs_per_second = 20;
  double mutating_rpc_burst = 50;
  size_t max_string_bytes = kDefaultMaxStringBytes;
};

class RequestGate {
 public:
  using CallerOf = std::function<Caller(const grpc::ServerContext&)>;
  // The boot clock (os::Clock::BootNow) the rate is kept on.
  using Now = std::function<os::BootTime()>;

  RequestGate(CallerOf caller_of, const GateConfig& config, Now now);

  // OK when the call may run; else the status to answer with.
  grpc::Status Admit(const grpc::ServerContext& context, absl::string_view method,
                     const google::protobuf::Message& request);
  // The same, for a caller already known (tests, and Admit itself).
  absl::Status AdmitCaller(const Caller& caller, absl::string_view method,
                           const google::protobuf::Message& request);

  void Reconfigure(const GateConfig& config);

 private:
  CallerOf caller_of_;
  Now now_;
  absl::Mutex mu_;
  GateConfig config_ ABSL_GUARDED_BY(mu_);
  TokenBucket bucket_ ABSL_GUARDED_BY(mu_);
};

// What each handler calls first. With no gate (unit tests of the services
// alone) only the string lengths are checked.
grpc::Status Admit(RequestGate* gate, const grpc::ServerContext& context, absl::string_view method,
                   const google::protobuf::Message& request);

}  // namespace rocenet::api
