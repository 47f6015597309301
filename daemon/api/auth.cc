// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/auth.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "daemon/api/status_convert.h"
#include "google/protobuf/descriptor.h"

namespace rocenet::api {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// "rocenet.v1.Addressing/Reconcile" for messages.
absl::string_view ShortName(absl::string_view method) {
  if (!method.empty() && method.front() == '/') method.remove_prefix(1);
  return method;
}

absl::Status Denied(absl::string_view method, const Caller& caller, absl::string_view why) {
  return absl::PermissionDeniedError(
      absl::StrCat(ShortName(method), ": caller ", caller.description, " ", why));
}

bool InGroup(const Caller& caller, gid_t gid) {
  return caller.gid == gid ||
         std::find(caller.groups.begin(), caller.groups.end(), gid) != caller.groups.end();
}

absl::Status CheckMessage(const Message& message, const std::string& prefix, size_t max_bytes,
                          int depth) {
  // Requests are shallow; a deep nesting is abuse, not data.
  if (depth > 16) return absl::InvalidArgumentError(absl::StrCat(prefix, ": nested too deeply"));
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  auto too_long = [&](const std::string& name, size_t size) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", size, " bytes, more than ", max_bytes));
  };
  for (const FieldDescriptor* field : fields) {
    const std::string name =
        prefix.empty() ? field->name() : absl::StrCat(prefix, ".", field->name());
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      if (field->is_repeated()) {
        const int n = reflection->FieldSize(message, field);
        for (int i = 0; i < n; ++i) {
          std::string scratch;
          const std::string& value =
              reflection->GetRepeatedStringReference(message, field, i, &scratch);
          if (value.size() > max_bytes)
            return too_long(absl::StrCat(name, "[", i, "]"), value.size());
        }
      } else {
        std::string scratch;
        const std::string& value = reflection->GetStringReference(message, field, &scratch);
        if (value.size() > max_bytes) return too_long(name, value.size());
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        const int n = reflection->FieldSize(message, field);
        for (int i = 0; i < n; ++i) {
          absl::Status s = CheckMessage(reflection->GetRepeatedMessage(message, field, i),
                                        absl::StrCat(name, "[", i, "]"), max_bytes, depth + 1);
          if (!s.ok()) return s;
        }
      } else {
        absl::Status s =
            CheckMessage(reflection->GetMessage(message, field), name, max_bytes, depth + 1);
        if (!s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<RpcRule>& RpcTable() {
  static const auto* table = new std::vector<RpcRule>{
      {"/rocenet.v1.PortDiscovery/ListPorts", RpcKind::kRead},
      {"/rocenet.v1.PortDiscovery/GetPort", RpcKind::kRead},
      {"/rocenet.v1.PortDiscovery/WatchPorts", RpcKind::kRead},
      {"/rocenet.v1.PortDiscovery/ListNeighbors", RpcKind::kRead},
      {"/rocenet.v1.Health/GetNodeHealth", RpcKind::kRead},
      {"/rocenet.v1.Health/GetPortHealth", RpcKind::kRead},
      {"/rocenet.v1.Health/WatchHealth", RpcKind::kRead},
      {"/rocenet.v1.Addressing/ListPlans", RpcKind::kRead},
      {"/rocenet.v1.Addressing/GetPlan", RpcKind::kRead},
      // Re-plans and re-applies addresses and routes.
      {"/rocenet.v1.Addressing/Reconcile", RpcKind::kMutate},
      // Move ports into and out of pods.
      {"/rocenet.v1.Attachments/Attach", RpcKind::kMutate},
      {"/rocenet.v1.Attachments/Detach", RpcKind::kMutate},
      // Reads only, but tells which pod holds which port: the CNI plugin
      // calls it as root anyway.
      {"/rocenet.v1.Attachments/Check", RpcKind::kRead},
      {"/rocenet.v1.Attachments/List", RpcKind::kRead},
      // Releases attachments.
      {"/rocenet.v1.Attachments/Gc", RpcKind::kMutate},
      // Decide which pods may have which ports (the DRA plugin, as root).
      {"/rocenet.v1.Reservations/Reserve", RpcKind::kMutate},
      {"/rocenet.v1.Reservations/Release", RpcKind::kMutate},
      // Which claim holds which ports, as rocectl reservations shows them.
      {"/rocenet.v1.Reservations/List", RpcKind::kRead},
      // Send test traffic over the fabric's ports, which running jobs share.
      {"/rocenet.v1.Diagnostics/Reach", RpcKind::kMutate},
      {"/rocenet.v1.Diagnostics/Bandwidth", RpcKind::kMutate},
      {"/rocenet.v1.Diagnostics/Allreduce", RpcKind::kMutate},
      {"/rocenet.v1.Diagnostics/Incast", RpcKind::kMutate},
      {"/rocenet.v1.Diagnostics/Rdma", RpcKind::kMutate},
      // Ends the test in progress: as much a change as starting one.
      {"/rocenet.v1.Diagnostics/Stop", RpcKind::kMutate},
      // Takes back every address, route and file rocenetd made, and stops
      // managing the node.
      {"/rocenet.v1.Lifecycle/Uninstall", RpcKind::kMutate},
  };
  return *table;
}

std::optional<RpcKind> KindOf(absl::string_view method) {
  for (const RpcRule& rule : RpcTable()) {
    if (method == rule.method) return rule.kind;
  }
  return std::nullopt;
}

absl::Status DecideAccess(const Caller& caller, absl::string_view method,
                          const AccessConfig& config) {
  const std::optional<RpcKind> kind = KindOf(method);
  if (!kind.has_value()) {
    return Denied(method, caller, "is refused: the method has no access rule");
  }
  switch (caller.via) {
    case Caller::Via::kUnixSocket:
      if (caller.uid == 0) return absl::OkStatus();
      if (*kind == RpcKind::kMutate) {
        return Denied(method, caller, "may not change the node: only root (uid 0) may");
      }
      if (config.read_gid.has_value() && InGroup(caller, *config.read_gid)) {
        return absl::OkStatus();
      }
      if (config.read_gid.has_value()) {
        return Denied(
            method, caller,
            absl::StrCat("is neither root nor in the read group ", config.read_group_name));
      }
      return Denied(method, caller, "is not root and no read group is configured");
    case Caller::Via::kTls:
      if (caller.verified_client_cert) return absl::OkStatus();
      if (*kind == RpcKind::kRead) return absl::OkStatus();
      return Denied(method, caller,
                    "may not change the node: remote callers need a verified client certificate");
    case Caller::Via::kUnknown:
      break;
  }
  return Denied(method, caller, "is refused: its transport is not authenticated");
}

TokenBucket::TokenBucket(double rate, double burst, os::BootTime now)
    : rate_(rate), burst_(burst), tokens_(burst), last_(now) {}

bool TokenBucket::TryTake(os::BootTime now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * rate_);
    last_ = now;
  }
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

void TokenBucket::Reconfigure(double rate, double burst) {
  rate_ = rate;
  burst_ = burst;
  tokens_ = std::min(tokens_, burst_);
}

absl::Status CheckStringLengths(const google::protobuf::Message& message, size_t max_bytes) {
  return CheckMessage(message, "", max_bytes, 0);
}

RequestGate::RequestGate(CallerOf caller_of, const GateConfig& config, Now now)
    : caller_of_(std::move(caller_of)),
      now_(std::move(now)),
      config_(config),
      bucket_(config.mutating_rpcs_per_second, config.mutating_rpc_burst, now_()) {}

absl::Status RequestGate::AdmitCaller(const Caller& caller, absl::string_view method,
                                      const google::protobuf::Message& request) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = DecideAccess(caller, method, config_.access); !s.ok()) return s;
  if (absl::Status s = CheckStringLengths(request, config_.max_string_bytes); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ShortName(method), ": ", s.message()));
  }
  if (KindOf(method) == RpcKind::kMutate && !bucket_.TryTake(now_())) {
    return absl::ResourceExhaustedError(
        absl::StrCat(ShortName(method), ": more than ", config_.mutating_rpc_burst,
                     " changing calls in a burst or ", config_.mutating_rpcs_per_second,
                     " per second; try again later"));
  }
  return absl::OkStatus();
}

grpc::Status RequestGate::Admit(const grpc::ServerContext& context, absl::string_view method,
                                const google::protobuf::Message& request) {
  return ToGrpc(AdmitCaller(caller_of_(context), method, request));
}

void RequestGate::Reconfigure(const GateConfig& config) {
  absl::MutexLock lock(&mu_);
  config_ = config;
  bucket_.Reconfigure(config.mutating_rpcs_per_second, config.mutating_rpc_burst);
}

grpc::Status Admit(RequestGate* gate, const grpc::ServerContext& context, absl::string_view method,
                   const google::protobuf::Message& request) {
  if (gate != nullptr) return gate->Admit(context, method, request);
  absl::Status s = CheckStringLengths(request, kDefaultMaxStringBytes);
  if (!s.ok()) {
    return ToGrpc(absl::InvalidArgumentError(absl::StrCat(ShortName(method), ": ", s.message())));
  }
  return grpc::Status::OK;
}

}  // namespace rocenet::api
