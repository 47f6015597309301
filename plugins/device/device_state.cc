// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/device_state.h"

#include <utility>

namespace rocenet::device {

void DeviceState::Update(PortMap ports) {
  absl::MutexLock lock(&mu_);
  // A port on its way into a pod (or out) has no link the daemon can read
  // for a moment; its MAC has not changed, and HCL's files must not lose it.
  for (auto& [id, port] : ports) {
    if (!port.mac.empty()) continue;
    if (auto last = state_.ports.find(id); last != state_.ports.end()) port.mac = last->second.mac;
  }
  for (const std::string& id : allocated_) {
    if (ports.contains(id)) continue;
    auto last = state_.ports.find(id);
    if (last == state_.ports.end()) continue;
    PortInfo kept = last->second;
    kept.present = false;
    kept.healthy = false;
    ports.emplace(id, std::move(kept));
  }
  state_.ports = std::move(ports);
  state_.daemon_lost = false;
  ++state_.generation;
}

void DeviceState::NoteAllocated(const std::vector<std::string>& ids) {
  absl::MutexLock lock(&mu_);
  allocated_.insert(ids.begin(), ids.end());
}

void DeviceState::SetDaemonLost() {
  absl::MutexLock lock(&mu_);
  if (state_.daemon_lost) return;
  state_.daemon_lost = true;
  ++state_.generation;
}

void DeviceState::Resend() {
  absl::MutexLock lock(&mu_);
  ++state_.resends;
  ++state_.generation;
}

void DeviceState::Shutdown() {
  absl::MutexLock lock(&mu_);
  state_.shut_down = true;
  ++state_.generation;
}

DeviceSnapshot DeviceState::CopyLocked() const { return state_; }

DeviceSnapshot DeviceState::Get() const {
  absl::MutexLock lock(&mu_);
  return CopyLocked();
}

DeviceSnapshot DeviceState::WaitNewer(uint64_t after, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto newer = [this, after]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return state_.generation > after; };
  mu_.AwaitWithTimeout(absl::Condition(&newer), timeout);
  return CopyLocked();
}

v1beta1::ListAndWatchResponse ToListAndWatch(const DeviceSnapshot& snapshot) {
  v1beta1::ListAndWatchResponse response;
  for (const auto& [id, port] : snapshot.ports) {
    v1beta1::Device* device = response.add_devices();
    device->set_id(id);
    bool healthy = !snapshot.daemon_lost && port.present && port.healthy;
    device->set_health(healthy ? kHealthy : kUnhealthy);
    if (port.numa_node >= 0) device->mutable_topology()->add_nodes()->set_id(port.numa_node);
  }
  return response;
}

}  // namespace rocenet::device
