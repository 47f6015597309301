// SPDX-License-Identifier: Apache-2.0
#include "plugins/cni/errors.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rocenet::cni {
namespace {

constexpr absl::string_view kCodeUrl = "type.rocenet.io/cni.code";
constexpr absl::string_view kDetailsUrl = "type.rocenet.io/cni.details";

// The absl code that best describes each CNI code, so a status is sensible
// even to code that ignores the payload.
absl::StatusCode AbslCodeFor(CniCode code) {
  switch (code) {
    case CniCode::kIncompatibleVersion:
      return absl::StatusCode::kFailedPrecondition;
    case CniCode::kUnsupportedField:
      return absl::StatusCode::kUnimplemented;
    case CniCode::kInvalidEnvironment:
    case CniCode::kDecodingFailure:
    case CniCode::kInvalidNetworkConfig:
      return absl::StatusCode::kInvalidArgument;
    case CniCode::kTryAgainLater:
    case CniCode::kPluginNotAvailable:
      return absl::StatusCode::kUnavailable;
    case CniCode::kInternal:
      break;
  }
  return absl::StatusCode::kInternal;
}

absl::string_view RpcName(DaemonCall call) {
  switch (call) {
    case DaemonCall::kAttach:
      return "rocenet.v1.Attachments/Attach";
    case DaemonCall::kDetach:
      return "rocenet.v1.Attachments/Detach";
    case DaemonCall::kCheck:
      return "rocenet.v1.Attachments/Check";
    case DaemonCall::kList:
      return "rocenet.v1.Attachments/List";
    case DaemonCall::kGc:
      return "rocenet.v1.Attachments/Gc";
  }
  return "rocenet.v1.Attachments";
}

// Whether a daemon INVALID_ARGUMENT is about a key of the network
// configuration rather than a CNI_* variable. The daemon's messages start
// with the object they are about ("mtu 12000: above ...", "deviceID x: ...").
bool AboutNetworkConfig(absl::string_view message) {
  const std::string head = absl::AsciiStrToLower(message.substr(0, message.find_first_of(" :")));
  return head == "mtu" || head == "mode" || head == "deviceid" || head == "device_id" ||
         head == "device";
}

}  // namespace

absl::Status CniError(CniCode code, absl::string_view msg, absl::string_view details) {
  absl::Status status(AbslCodeFor(code), msg);
  status.SetPayload(kCodeUrl, absl::Cord(absl::StrCat(static_cast<int>(code))));
  if (!details.empty()) status.SetPayload(kDetailsUrl, absl::Cord(details));
  return status;
}

CniCode CniCodeOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kCodeUrl);
  int code = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &code)) {
    return CniCode::kInternal;
  }
  return static_cast<CniCode>(code);
}

nlohmann::ordered_json ErrorJson(absl::string_view cni_version, const absl::Status& status) {
  const absl::optional<absl::Cord> details = status.GetPayload(kDetailsUrl);
  nlohmann::ordered_json error;
  error["cniVersion"] = std::string(cni_version);
  error["code"] = static_cast<int>(CniCodeOf(status));
  error["msg"] = std::string(status.message());
  error["details"] = details.has_value() ? std::string(*details) : std::string();
  return error;
}

absl::Status DaemonError(DaemonCall call, const absl::Status& daemon_status) {
  const absl::string_view message = daemon_status.message();
  const std::string details =
      absl::StrCat(RpcName(call), " failed: ", absl::StatusCodeToString(daemon_status.code()));
  if (call == DaemonCall::kList) {
    return CniError(CniCode::kPluginNotAvailable, message, details);
  }
  switch (daemon_status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kAborted:
      return CniError(CniCode::kTryAgainLater, message, details);
    case absl::StatusCode::kInvalidArgument:
      return CniError(AboutNetworkConfig(message) ? CniCode::kInvalidNetworkConfig
                                                  : CniCode::kInvalidEnvironment,
                      message, details);
    case absl::StatusCode::kNotFound:
      return CniError(
          call == DaemonCall::kAttach ? CniCode::kInvalidNetworkConfig : CniCode::kInternal,
          message, details);
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
      return CniError(call == DaemonCall::kCheck ? CniCode::kInternal : CniCode::kTryAgainLater,
                      message, details);
    case absl::StatusCode::kUnimplemented:
      return CniError(CniCode::kInternal,
                      absl::StrCat("rocenetd does not serve ", RpcName(call),
                                   " (is it older than the rocenet plugin?)"),
                      absl::StrCat(details, ": ", message));
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return CniError(CniCode::kInternal, message,
                      absl::StrCat(details, " (the plugin must run as root)"));
    default:
      return CniError(CniCode::kInternal, message, details);
  }
}

}  // namespace rocenet::cni
