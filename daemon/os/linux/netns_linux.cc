// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/netns_linux.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "daemon/common/errno_status.h"
#include "daemon/os/linux/netlink_linux.h"
#include "daemon/os/linux/packet_socket_linux.h"
#include "daemon/os/linux/rdma_linux.h"

namespace rocenet::os {
namespace {

class FdHandle final : public NetnsHandle {
 public:
  FdHandle(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FdHandle() override { close(fd_); }
  int fd() const override { return fd_; }
  const std::string& path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

class NetnsLinux::Worker {
 public:
  explicit Worker(const NetnsHandle* host) : host_(host) {}
  ~Worker() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  // Runs `fn` on the worker, inside `ns`; blocks until it is done.
  absl::Status Run(const NetnsHandle& ns, const std::function<absl::Status()>& fn) {
    absl::MutexLock one_at_a_time(&call_mu_);
    absl::MutexLock lock(&mu_);
    if (!running_) {
      // First use, or the last worker could not return home and ended.
      if (thread_.joinable()) {
        mu_.Unlock();
        thread_.join();
        mu_.Lock();
      }
      running_ = true;
      thread_ = std::thread([this] { Main(); });
    }
    job_ = Job{&ns, &fn};
    mu_.Await(absl::Condition(
        +[](std::optional<absl::Status>* result) { return result->has_value(); }, &result_));
    absl::Status result = *std::move(result_);
    result_.reset();
    return result;
  }

 private:
  struct Job {
    const NetnsHandle* ns;
    const std::function<absl::Status()>* fn;
  };

  void Main() {
    absl::MutexLock lock(&mu_);
    while (true) {
      mu_.Await(absl::Condition(this, &Worker::HasWorkOrStop));
      if (stop_) break;
      const Job job = *job_;
      job_.reset();
      mu_.Unlock();
      absl::Status result;
      bool home = true;
      if (setns(job.ns->fd(), CLONE_NEWNET) < 0) {
        result = ErrnoToStatus(errno, absl::StrCat("enter network namespace ", job.ns->path()));
      } else {
        result = (*job.fn)();
        if (setns(host_->fd(), CLONE_NEWNET) < 0) {
          home = false;
          result = ErrnoToStatus(errno, absl::StrCat("return from network namespace ",
                                                     job.ns->path(), " to the host's"));
        }
      }
      mu_.Lock();
      result_ = std::move(result);
      if (!home) break;  // never do other work from the wrong namespace
    }
    running_ = false;
  }

  bool HasWorkOrStop() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_ || job_.has_value();
  }

  const NetnsHandle* host_;
  absl::Mutex call_mu_;
  absl::Mutex mu_;
  std::optional<Job> job_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> result_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

NetnsLinux::NetnsLinux(std::unique_ptr<NetnsHandle> host)
    : host_(std::move(host)), worker_(std::make_unique<Worker>(host_.get())) {}

NetnsLinux::~NetnsLinux() = default;

absl::StatusOr<std::unique_ptr<NetnsLinux>> NetnsLinux::Create() {
  const int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open /proc/thread-self/ns/net");
  return std::unique_ptr<NetnsLinux>(
      new NetnsLinux(std::make_unique<FdHandle>(fd, "/proc/thread-self/ns/net")));
}

absl::StatusOr<std::unique_ptr<NetnsHandle>> NetnsLinux::Open(absl::string_view path) {
  const std::string p(path);
  const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("network namespace ", p));
  const int type = ioctl(fd, NS_GET_NSTYPE);
  if (type != CLONE_NEWNET) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(p, " is not a network namespace"));
  }
  return std::unique_ptr<NetnsHandle>(new FdHandle(fd, p));
}

bool NetnsLinux::IsHost(const NetnsHandle& ns) const {
  // A namespace is one nsfs inode, however many paths lead to it.
  struct stat a {};
  struct stat b {};
  if (fstat(ns.fd(), &a) != 0 || fstat(host_->fd(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

namespace {

// Runs `open` (returning StatusOr<unique_ptr<Derived>>) on the worker inside
// `ns`: what it opens stays bound to that namespace.
template <typename Base, typename Worker, typename Open>
absl::StatusOr<std::unique_ptr<Base>> OpenInside(Worker& worker, const NetnsHandle& ns, Open open) {
  std::unique_ptr<Base> out;
  absl::Status status = worker.Run(ns, [&]() -> absl::Status {
    auto opened = open();
    if (!opened.ok()) return opened.status();
    out = std::move(*opened);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Netlink>> NetnsLinux::OpenNetlink(const NetnsHandle& ns) {
  return OpenInside<Netlink>(*worker_, ns, [] { return NetlinkLinux::Open(); });
}

absl::StatusOr<std::unique_ptr<Rdma>> NetnsLinux::OpenRdma(const NetnsHandle& ns) {
  return OpenInside<Rdma>(*worker_, ns, [] { return RdmaLinux::Open(); });
}

absl::StatusOr<std::unique_ptr<PacketSocket>> NetnsLinux::OpenLldp(const NetnsHandle& ns,
                                                                   int ifindex,
                                                                   absl::string_view ifname) {
  return OpenInside<PacketSocket>(*worker_, ns, [&] {
    PacketSocketFactoryLinux factory;
    return factory.OpenLldp(ifindex, ifname);
  });
}

}  // namespace rocenet::os
