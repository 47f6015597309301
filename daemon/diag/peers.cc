// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/peers.h"

namespace rocenet::diag {

void CallGroup::Abandon() {
  absl::MutexLock lock(&mu_);
  if (abandoned_) return;
  abandoned_ = true;
  for (auto& [id, release] : calls_) release();
}

bool CallGroup::abandoned() const {
  absl::MutexLock lock(&mu_);
  return abandoned_;
}

int CallGroup::Join(Release release) {
  absl::MutexLock lock(&mu_);
  const int id = next_id_++;
  if (abandoned_) release();
  calls_.emplace(id, std::move(release));
  return id;
}

void CallGroup::Leave(int id) {
  absl::MutexLock lock(&mu_);
  calls_.erase(id);
}

}  // namespace rocenet::diag
