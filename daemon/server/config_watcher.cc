// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/config_watcher.h"

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/config/config_files.h"

namespace rocenet::server {

absl::StatusOr<std::unique_ptr<ConfigWatcher>> ConfigWatcher::Start(
    os::EventLoop* loop, const os::FileSystem* fs, Params params,
    absl::AnyInvocable<void()> on_change) {
  ASSIGN_OR_RETURN(std::unique_ptr<os::DirectoryWatch> watch, os::DirectoryWatch::Create());
  RETURN_IF_ERROR(watch->Follow(params.path));
  std::unique_ptr<ConfigWatcher> watcher(
      new ConfigWatcher(loop, fs, std::move(params), std::move(watch), std::move(on_change)));
  watcher->last_ = watcher->params_.loaded;
  ConfigWatcher* self = watcher.get();
  RETURN_IF_ERROR(loop->AddReader(self->watch_->fd(), [self] { self->OnEvents(); }));
  // Whatever changed between the load and the watch is a change too.
  self->timer_ = loop->RunAt(loop->BootNow(), [self] { self->Check(); });
  return watcher;
}

ConfigWatcher::~ConfigWatcher() {
  loop_->RemoveReader(watch_->fd());
  if (timer_ != 0) loop_->Cancel(timer_);
}

void ConfigWatcher::OnEvents() {
  if (!watch_->Drain()) return;
  // Wait for the burst to end: restart the settle time on every event.
  if (timer_ != 0) loop_->Cancel(timer_);
  timer_ = loop_->RunAt(loop_->BootNow() + params_.settle, [this] { Check(); });
}

std::string ConfigWatcher::Fingerprint() const {
  absl::StatusOr<std::vector<config::ConfigDocument>> documents =
      config::ReadConfigDocuments(*fs_, params_.path);
  if (!documents.ok()) return absl::StrCat("unreadable: ", documents.status().message());
  return config::ConfigFingerprint(*documents);
}

void ConfigWatcher::Check() {
  timer_ = 0;
  // A symlink may lead elsewhere now (a ConfigMap's ..data); a path that is
  // gone is watched again when its directory is.
  if (absl::Status s = watch_->Follow(params_.path); !s.ok()) {
    SPDLOG_DEBUG("config watch: {}", s.message());
  }
  std::string now = Fingerprint();
  if (now == last_) return;
  last_ = std::move(now);
  SPDLOG_INFO("config {} changed on disk", params_.path);
  on_change_();
}

}  // namespace rocenet::server
