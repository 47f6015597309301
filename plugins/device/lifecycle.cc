// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/lifecycle.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/logging.h"
#include "k8s/deviceplugin/v1beta1/api.grpc.pb.h"

namespace rocenet::device {
namespace {

std::chrono::system_clock::time_point DeadlineIn(absl::Duration d) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(d);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Something happened in the kubelet directory that needs action.
struct DirEvents {
  bool kubelet_created = false;
  bool ours_removed = false;
  // Another plugin's socket of the resource (`prefix`*.sock).
  bool other_removed = false;
};

DirEvents ReadEvents(int fd, const std::string& ours, const std::string& prefix) {
  DirEvents events;
  alignas(inotify_event) char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      std::string name = ev->len > 0 ? std::string(ev->name) : "";
      if (name == kKubeletSocket && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        events.kubelet_created = true;
      }
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        if (name == ours) {
          events.ours_removed = true;
        } else if (absl::StartsWith(name, prefix) && absl::EndsWith(name, ".sock")) {
          events.other_removed = true;
        }
      }
      p += sizeof(inotify_event) + ev->len;
    }
  }
  return events;
}

}  // namespace

PluginLifecycle::PluginLifecycle(LifecycleOptions options,
                                 std::function<std::unique_ptr<grpc::Service>()> make_service)
    : options_(std::move(options)), make_service_(std::move(make_service)) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

PluginLifecycle::~PluginLifecycle() {
  StopServing();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::string PluginLifecycle::SocketPath() const {
  return absl::StrCat(options_.kubelet_dir, "/", options_.socket_name);
}

void PluginLifecycle::Stop() {
  uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof(one)) < 0) {
    // Nothing to do: the counter is full only if Stop() was called before.
  }
}

absl::Status PluginLifecycle::Serve() {
  StopServing();
  const std::string path = SocketPath();
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoToStatus(errno, absl::StrCat("remove stale socket ", path));
  }
  service_ = make_service_();
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) return absl::UnavailableError(absl::StrCat("cannot serve on ", path));

  // The same check kubelet will do: dial the socket and get an answer.
  auto channel = grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(options_.rpc_timeout));
  ctx.set_wait_for_ready(true);
  v1beta1::DevicePluginOptions reply;
  grpc::Status s = stub->GetDevicePluginOptions(&ctx, v1beta1::Empty(), &reply);
  if (!s.ok()) {
    StopServing();
    return absl::UnavailableError(
        absl::StrCat("serving on ", path, " but cannot dial it: ", s.error_message()));
  }
  SPDLOG_INFO("serving the device plugin API on {}", path);
  return absl::OkStatus();
}

void PluginLifecycle::StopServing() {
  if (server_ == nullptr) return;
  // Open ListAndWatch streams are cancelled after the deadline; they notice
  // within their poll interval.
  server_->Shutdown(DeadlineIn(absl::Milliseconds(100)));
  server_->Wait();
  server_.reset();
  service_.reset();
}

absl::Status PluginLifecycle::Register() {
  const std::string kubelet = absl::StrCat(options_.kubelet_dir, "/", kKubeletSocket);
  auto channel = grpc::CreateChannel("unix:" + kubelet, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version(kApiVersion);
  request.set_endpoint(options_.socket_name);
  request.set_resource_name(options_.resource_name);
  request.mutable_options()->set_get_preferred_allocation_available(true);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(options_.rpc_timeout));
  v1beta1::Empty reply;
  grpc::Status s = stub->Register(&ctx, request, &reply);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("register ", options_.resource_name, " with kubelet at ",
                                     kubelet, ": ", s.error_message()));
  }
  SPDLOG_INFO("registered {} with kubelet at {} (endpoint {})", options_.resource_name, kubelet,
              options_.socket_name);
  return absl::OkStatus();
}

std::optional<std::string> PluginLifecycle::OtherPluginServing() const {
  const std::string prefix = absl::StrReplaceAll(options_.resource_name, {{"/", "_"}});
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.kubelet_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == options_.socket_name || !absl::StartsWith(name, prefix) ||
        !absl::EndsWith(name, ".sock") || !entry.is_socket(ec)) {
      continue;
    }
    auto channel =
        grpc::CreateChannel("unix:" + entry.path().string(), grpc::InsecureChannelCredentials());
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(options_.rpc_timeout));
    v1beta1::DevicePluginOptions reply;
    if (v1beta1::DevicePlugin::NewStub(channel)
            ->GetDevicePluginOptions(&ctx, v1beta1::Empty(), &reply)
            .ok()) {
      return entry.path().string();
    }
  }
  return std::nullopt;
}

absl::Status PluginLifecycle::Run() {
  if (stop_fd_ < 0) return ErrnoToStatus(errno, "eventfd");
  int in = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (in < 0) return ErrnoToStatus(errno, "inotify_init1");
  // Watch before serving, so a kubelet restart during start-up is seen.
  if (::inotify_add_watch(in, options_.kubelet_dir.c_str(),
                          IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM) < 0) {
    absl::Status s = ErrnoToStatus(errno, absl::StrCat("watch ", options_.kubelet_dir));
    ::close(in);
    return s;
  }

  bool serving = false;
  bool registered = false;
  const std::string prefix = absl::StrReplaceAll(options_.resource_name, {{"/", "_"}});
  absl::Time resend_until = absl::InfinitePast();
  absl::Status last_error;
  auto note = [&last_error](const absl::Status& s) {
    // Retries happen twice a second; log a failure once, not every time.
    if (s.ToString() != last_error.ToString()) SPDLOG_WARN("{}", s.message());
    last_error = s;
  };
  while (true) {
    if (!serving) {
      absl::Status s = Serve();
      serving = s.ok();
      registered = false;
      if (!s.ok()) note(s);
    }
    if (serving && !registered && Exists(absl::StrCat(options_.kubelet_dir, "/", kKubeletSocket))) {
      absl::Status s = Register();
      registered = s.ok();
      if (registered) {
        last_error = absl::OkStatus();
      } else {
        note(s);
      }
    }

    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {in, POLLIN, 0}};
    bool idle = serving && registered;
    int timeout_ms =
        idle ? -1 : static_cast<int>(absl::ToInt64Milliseconds(options_.retry_interval));
    const bool resending = absl::Now() < resend_until;
    if (resending) {
      const int every = static_cast<int>(absl::ToInt64Milliseconds(options_.resend_every));
      timeout_ms = timeout_ms < 0 ? every : std::min(timeout_ms, every);
    }
    int n = ::poll(fds, 2, timeout_ms);
    if (n < 0 && errno != EINTR) {
      absl::Status s = ErrnoToStatus(errno, "poll");
      ::close(in);
      return s;
    }
    if (fds[0].revents & POLLIN) break;
    // Looked at again: a loop that woke late does not resend past the window.
    if (resending && absl::Now() < resend_until && options_.other_plugin_left != nullptr) {
      options_.other_plugin_left();
    }
    if (fds[1].revents & POLLIN) {
      DirEvents events = ReadEvents(in, options_.socket_name, prefix);
      if (events.other_removed && options_.other_plugin_left != nullptr) {
        SPDLOG_INFO(
            "another device plugin of {} left: sending the device list again for {} while "
            "kubelet deregisters it",
            options_.resource_name, absl::FormatDuration(options_.resend_for));
        resend_until = absl::Now() + options_.resend_for;
      }
      // Our own restart removes and recreates the socket: only a socket
      // that is really gone needs serving again.
      if (events.ours_removed && !Exists(SocketPath())) {
        SPDLOG_INFO("{} was removed (kubelet restarting?): serving again", SocketPath());
        serving = false;
      }
      if (events.kubelet_created) {
        SPDLOG_INFO("kubelet.sock was created (kubelet restarted): registering again");
        registered = false;
      }
    }
  }
  ::close(in);
  StopServing();
  ::unlink(SocketPath().c_str());
  return absl::OkStatus();
}

}  // namespace rocenet::device
