// SPDX-License-Identifier: Apache-2.0
#include "plugins/cni/dispatch.h"

#include <istream>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_join.h"
#include "daemon/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "plugins/cni/errors.h"
#include "plugins/cni/netconf.h"
#include "plugins/cni/result.h"

namespace rocenet::cni {
namespace {

using Json = nlohmann::ordered_json;

using Client = std::unique_ptr<AttachmentsClient>;

bool Unreachable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

absl::StatusOr<Client> Connect(const NetConf& conf, const AttachmentsClientFactory& connect) {
  return connect(DaemonEndpoint{conf.socket, conf.timeout});
}

absl::StatusOr<Json> Add(const Request& request, const AttachmentsClientFactory& connect) {
  const Invocation& invocation = request.invocation;
  const NetConf& conf = request.conf;
  v1::AttachRequest attach;
  attach.set_container_id(invocation.container_id);
  attach.set_netns(invocation.netns);
  attach.set_ifname(invocation.ifname);
  attach.set_device_id(conf.device_id);
  attach.set_any_free_port(conf.any_free_port);
  attach.set_cni_version(conf.cni_version);
  attach.mutable_pod()->set_namespace_(invocation.pod.namespace_name);
  attach.mutable_pod()->set_name(invocation.pod.name);
  attach.mutable_pod()->set_uid(invocation.pod.uid);
  attach.set_mtu(conf.mtu);
  attach.set_mode(conf.mode);
  attach.set_network(conf.name);

  absl::StatusOr<Client> client = Connect(request.conf, connect);
  if (!client.ok()) return DaemonError(DaemonCall::kAttach, client.status());
  absl::StatusOr<v1::Attachment> attachment = (*client)->Attach(attach);
  if (!attachment.ok()) return DaemonError(DaemonCall::kAttach, attachment.status());
  return RenderAddResult(conf.cni_version, *attachment, invocation.ifname, invocation.netns,
                         conf.prev_result);
}

absl::Status Del(const Request& request, const AttachmentsClientFactory& connect,
                 std::ostream& err) {
  const Invocation& invocation = request.invocation;
  v1::DetachRequest detach;
  detach.set_container_id(invocation.container_id);
  detach.set_ifname(invocation.ifname);
  detach.set_netns(invocation.netns);

  absl::StatusOr<Client> client = Connect(request.conf, connect);
  absl::Status status = client.status();
  if (client.ok()) status = (*client)->Detach(detach).status();
  if (status.ok() || status.code() == absl::StatusCode::kNotFound) return absl::OkStatus();
  if (Unreachable(status) && invocation.netns.empty()) {
    err << "rocenet: DEL " << invocation.container_id << "/" << invocation.ifname
        << " without a network namespace: nothing left in the pod; " << status.message() << "\n";
    return absl::OkStatus();
  }
  return DaemonError(DaemonCall::kDetach, status);
}

absl::Status Check(const Request& request, const AttachmentsClientFactory& connect) {
  const Invocation& invocation = request.invocation;
  v1::CheckRequest check;
  check.set_container_id(invocation.container_id);
  check.set_netns(invocation.netns);
  check.set_ifname(invocation.ifname);

  absl::StatusOr<Client> client = Connect(request.conf, connect);
  if (!client.ok()) return DaemonError(DaemonCall::kCheck, client.status());
  absl::StatusOr<v1::Attachment> attachment = (*client)->Check(check);
  if (!attachment.ok()) return DaemonError(DaemonCall::kCheck, attachment.status());
  return CheckPrevResult(*attachment, invocation.ifname, invocation.netns,
                         *request.conf.prev_result);
}

absl::Status Gc(const Request& request, const AttachmentsClientFactory& connect) {
  // The list is this network's: the daemon leaves other networks'
  // attachments alone. It keeps whole containers: an attachment whose
  // container is valid stays, whatever its interface name.
  std::set<std::string> containers;
  for (const GcAttachment& valid : request.conf.valid_attachments) {
    containers.insert(valid.container_id);
  }
  v1::GcRequest gc;
  gc.set_network(request.conf.name);
  for (const std::string& id : containers) gc.add_valid_container_ids(id);

  absl::StatusOr<Client> client = Connect(request.conf, connect);
  if (!client.ok()) return DaemonError(DaemonCall::kGc, client.status());
  absl::StatusOr<v1::GcResponse> released = (*client)->Gc(gc);
  if (!released.ok()) return DaemonError(DaemonCall::kGc, released.status());
  return absl::OkStatus();
}

absl::Status ProbeStatus(const Request& request, const AttachmentsClientFactory& connect) {
  absl::StatusOr<Client> client = Connect(request.conf, connect);
  if (!client.ok()) return DaemonError(DaemonCall::kList, client.status());
  absl::StatusOr<v1::ListAttachmentsResponse> listed = (*client)->List();
  if (!listed.ok()) return DaemonError(DaemonCall::kList, listed.status());
  return absl::OkStatus();
}

// The verb's output on stdout (nullopt: none), or its error.
absl::StatusOr<std::optional<Json>> Execute(const Request& request,
                                            const AttachmentsClientFactory& connect,
                                            std::ostream& err) {
  switch (request.invocation.command) {
    case Command::kAdd: {
      ASSIGN_OR_RETURN(Json result, Add(request, connect));
      return std::optional<Json>(std::move(result));
    }
    case Command::kDel:
      RETURN_IF_ERROR(Del(request, connect, err));
      break;
    case Command::kCheck:
      RETURN_IF_ERROR(Check(request, connect));
      break;
    case Command::kGc:
      RETURN_IF_ERROR(Gc(request, connect));
      break;
    case Command::kStatus:
      RETURN_IF_ERROR(ProbeStatus(request, connect));
      break;
    case Command::kVersion:
      return std::optional<Json>(VersionResult(request.conf.cni_version));
  }
  return std::optional<Json>();
}

// One JSON document on stdout. Messages quote CNI_* values and daemon
// text as given; bytes that are not UTF-8 are replaced rather than thrown
// over.
void Print(std::ostream& out, const Json& document) {
  out << document.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

int Fail(std::ostream& out, absl::string_view cni_version, const absl::Status& status) {
  Print(out, ErrorJson(cni_version, status));
  return 1;
}

}  // namespace

int Dispatch(const Environment& env, std::istream& in, std::ostream& out, std::ostream& err,
             const AttachmentsClientFactory& connect) {
  const absl::StatusOr<Command> command = ParseCommand(env);
  if (!command.ok()) {
    if (env.find("CNI_COMMAND") == env.end()) {
      err << "rocenet: the CNI plugin of rocenetd (CNI " << absl::StrJoin(kSupportedVersions, ", ")
          << "); container runtimes run it with CNI_COMMAND set\n";
    }
    return Fail(out, kLatestVersion, command.status());
  }
  const std::string config{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (*command == Command::kVersion) {
    Print(out, VersionResult(ReplyVersion(config)));
    return 0;
  }
  const absl::StatusOr<Request> request = ParseRequest(*command, env, config);
  if (!request.ok()) return Fail(out, ReplyVersion(config), request.status());
  const absl::StatusOr<std::optional<Json>> output = Execute(*request, connect, err);
  if (!output.ok()) return Fail(out, request->conf.cni_version, output.status());
  if (output->has_value()) Print(out, **output);
  return 0;
}

}  // namespace rocenet::cni
