// SPDX-License-Identifier: Apache-2.0
#include "daemon/qos/pfc_controller.h"

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"

namespace rocenet::qos {
namespace {

bool InHost(const inventory::Port& port) { return port.present && port.attached_to.empty(); }

// Equal but for the counters, which move all the time.
bool SameState(const PortPfc& a, const PortPfc& b) {
  return a.name == b.name && a.supported == b.supported &&
         a.settings.capability == b.settings.capability &&
         a.settings.enabled == b.settings.enabled && a.wanted == b.wanted &&
         a.problem == b.problem && a.problem_message == b.problem_message;
}

}  // namespace

bool IsGaudiPort(const inventory::Port& port) {
  return port.discovery == inventory::Discovery::kGaudiSysfs || port.pci.driver == "habanalabs" ||
         port.pci.netdev_driver == "habanalabs_en" || port.pci.netdev_driver == "hbl_en";
}

absl::Status PfcController::Check(const PfcRequest& request,
                                  const std::vector<inventory::Port>& ports) {
  if (request.kind == PfcRequest::Kind::kKeep || dcb_ == nullptr) return absl::OkStatus();
  for (const inventory::Port& port : ports) {
    if (!InHost(port)) continue;
    absl::StatusOr<os::PfcSettings> settings = dcb_->GetPfc(port.name);
    // No DCB is reported on the port, not refused; a device that went away
    // is checked when it is back.
    if (!settings.ok()) continue;
    absl::StatusOr<std::optional<uint8_t>> wanted =
        ResolvePfc(request, port.name, {IsGaudiPort(port), settings->capability});
    if (!wanted.ok()) return wanted.status();
  }
  return absl::OkStatus();
}

bool PfcController::Sync(const std::vector<inventory::Port>& ports) {
  std::map<std::string, PortPfc> next;
  bool changed = false;
  for (const inventory::Port& port : ports) {
    auto before = ports_.find(port.id);
    const PortPfc* old = before == ports_.end() ? nullptr : &before->second;
    if (!port.present) {
      no_dcb_.erase(port.id);
      continue;
    }
    if (!port.attached_to.empty()) {
      // In its pod the device keeps its PFC; rocenet looks again once it is
      // back.
      if (old != nullptr) next[port.id] = *old;
      continue;
    }
    PortPfc now = SyncOne(port, old);
    changed |= old == nullptr || !SameState(*old, now);
    next[port.id] = std::move(now);
  }
  changed |= next.size() != ports_.size();
  ports_ = std::move(next);
  return changed;
}

PortPfc PfcController::SyncOne(const inventory::Port& port, const PortPfc* before) {
  PortPfc out;
  out.name = port.name;
  const bool asked = request_.kind != PfcRequest::Kind::kKeep;
  auto no_dcb = [&](const std::string& why) {
    if (asked) {
      out.problem = "NoDcb";
      out.problem_message =
          absl::StrCat("port ", port.name, ": qos.pfc asks for PFC ", FormatPfcRequest(request_),
                       " but ", why, "; its PFC is left as it is");
      if (before == nullptr || before->problem != out.problem) {
        SPDLOG_WARN("{}", out.problem_message);
      }
    }
    return out;
  };
  if (dcb_ == nullptr) return no_dcb("rocenetd has no DCB access");
  if (auto it = no_dcb_.find(port.id); it != no_dcb_.end() && it->second == port.link.ifindex) {
    return no_dcb("the device has no DCB support (dcbnl)");
  }
  absl::StatusOr<os::PfcSettings> read = dcb_->GetPfc(port.name);
  if (absl::IsUnimplemented(read.status())) {
    no_dcb_[port.id] = port.link.ifindex;
    return no_dcb("the device has no DCB support (dcbnl)");
  }
  if (!read.ok()) {
    // Renamed or gone between the event and now: the next event tells.
    SPDLOG_DEBUG("port {}: {}", port.name, read.status().message());
    return before != nullptr ? *before : out;
  }
  out.supported = true;
  out.settings = *read;
  if (!asked) return out;
  absl::StatusOr<std::optional<uint8_t>> wanted =
      ResolvePfc(request_, port.name, {IsGaudiPort(port), read->capability});
  if (!wanted.ok()) {
    out.problem = "Refused";
    out.problem_message = absl::StrCat(wanted.status().message(), "; its PFC is left as it is");
    if (before == nullptr || before->problem_message != out.problem_message) {
      SPDLOG_ERROR("{}", out.problem_message);
    }
    return out;
  }
  out.wanted = *wanted;
  if (read->enabled == **wanted) return out;
  const std::string was = FormatPriorities(read->enabled);
  if (absl::Status s = dcb_->SetPfc(port.name, **wanted); !s.ok()) {
    out.problem = "SetFailed";
    out.problem_message = absl::StrCat("port ", port.name, ": ", s.message());
    if (before == nullptr || before->problem_message != out.problem_message) {
      SPDLOG_ERROR("{}", out.problem_message);
    }
    return out;
  }
  ++changes_;
  out.settings.enabled = **wanted;
  const bool was_right = before != nullptr && before->supported && before->wanted == out.wanted &&
                         before->settings.enabled == **wanted;
  SPDLOG_INFO("port {}: PFC on {} (was {}{})", port.name, FormatPriorities(**wanted), was,
              was_right ? ", changed since rocenet set it: reset or by hand" : "");
  return out;
}

}  // namespace rocenet::qos
