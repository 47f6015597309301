// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/peers.h"

namespace rocenet::diag {

CallGroup::CallGroup(CallGroup* parent) : parent_(parent) {
  if (parent_ == nullptr) return;
  in_parent_ =
      parent_->JoinMember({.release = [this] { Abandon(); }, .cut = [this] { return Cut(); }});
}

CallGroup::~CallGroup() {
  if (parent_ != nullptr) parent_->Leave(in_parent_);
}

void CallGroup::Abandon() {
  absl::MutexLock lock(&mu_);
  if (abandoned_) return;
  abandoned_ = true;
  for (auto& [id, member] : members_) member.release();
}

bool CallGroup::abandoned() const {
  absl::MutexLock lock(&mu_);
  return abandoned_;
}

std::vector<std::string> CallGroup::Cut() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (auto& [id, member] : members_) {
    if (member.cut == nullptr) continue;
    for (std::string& name : member.cut()) names.push_back(std::move(name));
  }
  return names;
}

int CallGroup::Join(Release release, Release cut, std::string name) {
  Cutter cutter;
  if (cut != nullptr) {
    cutter = [cut = std::move(cut), name = std::move(name)] {
      cut();
      return name.empty() ? std::vector<std::string>{} : std::vector<std::string>{name};
    };
  }
  return JoinMember({.release = std::move(release), .cut = std::move(cutter)});
}

int CallGroup::JoinMember(Member member) {
  absl::MutexLock lock(&mu_);
  const int id = next_id_++;
  if (abandoned_) member.release();
  members_.emplace(id, std::move(member));
  return id;
}

void CallGroup::Leave(int id) {
  absl::MutexLock lock(&mu_);
  members_.erase(id);
}

}  // namespace rocenet::diag
