// SPDX-License-Identifier: Apache-2.0
// ConfigWatcher: notices that rocenetd's configuration changed on disk.
//
// Watches the --config file or directory (os::DirectoryWatch) and, once
// events have settled for `settle` (an editor's or kubelet's burst of
// renames is one change), reads the documents again and compares their
// fingerprint with the last one seen. Only a real change calls `on_change`,
// once; a touch, a rewrite with the same bytes or an event about another
// file in the directory does nothing. A change to something unreadable (the
// file removed) counts as a change too, so the reload that follows says what
// is wrong; its return counts again.
//
// This is how a ConfigMap edit reaches a running daemon: kubelet updates the
// volume (in about a minute) and no one has to send SIGHUP. Loop thread only.
#pragma once

#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/os/filesystem.h"
#include "daemon/os/linux/directory_watch.h"
#include "daemon/os/linux/event_loop.h"

namespace rocenet::server {

class ConfigWatcher {
 public:
  struct Params {
    std::string path;
    // config::ConfigFingerprint() of the documents the running configuration came
    // from; a change is measured against it.
    std::string loaded;
    absl::Duration settle = absl::Milliseconds(250);
  };

  // `loop` and `fs` are not owned and must outlive the watcher.
  static absl::StatusOr<std::unique_ptr<ConfigWatcher>> Start(os::EventLoop* loop,
                                                              const os::FileSystem* fs,
                                                              Params params,
                                                              absl::AnyInvocable<void()> on_change);
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

 private:
  ConfigWatcher(os::EventLoop* loop, const os::FileSystem* fs, Params params,
                std::unique_ptr<os::DirectoryWatch> watch, absl::AnyInvocable<void()> on_change)
      : loop_(loop),
        fs_(fs),
        params_(std::move(params)),
        watch_(std::move(watch)),
        on_change_(std::move(on_change)) {}
  void OnEvents();
  void Check();
  std::string Fingerprint() const;

  os::EventLoop* const loop_;
  const os::FileSystem* const fs_;
  const Params params_;
  std::unique_ptr<os::DirectoryWatch> watch_;
  absl::AnyInvocable<void()> on_change_;
  std::string last_;
  os::EventLoop::TimerId timer_ = 0;
};

}  // namespace rocenet::server
