#include "daemon/os/linux/netns_linux.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <functional>
#include <vector>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/common/errno_status.h"
#include "daemon/os/linux/netlink_linux.h"
#include "daemon/os/linux/packet_socket_linux.h"

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

// Runs `fn` on a new thread that has entered `ns`. The thread ends with the
// work, so its namespace never leaks into anything else.
absl::Status RunIn(const NetnsHandle& ns, const std::function<absl::Status()>& fn) {
  absl::Status result;
  std::thread worker([&] {
    if (setns(ns.fd(), CLONE_NEWNET) < 0) {
      result = ErrnoToStatus(errno, absl::StrCat("enter network namespace ", ns.path()));
      return;
    }
    result = fn();
  });
  worker.join();
  return result;
}

}  // namespace

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

absl::StatusOr<std::unique_ptr<Netlink>> NetnsLinux::OpenNetlink(const NetnsHandle& ns) {
  std::unique_ptr<Netlink> out;
  absl::Status status = RunIn(ns, [&]() -> absl::Status {
    absl::StatusOr<std::unique_ptr<NetlinkLinux>> netlink = NetlinkLinux::Open();
    if (!netlink.ok()) return netlink.status();
    out = std::move(*netlink);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::unique_ptr<PacketSocket>> NetnsLinux::OpenLldp(const NetnsHandle& ns,
                                                                   int ifindex,
                                                                   absl::string_view ifname) {
  std::unique_ptr<PacketSocket> out;
  absl::Status status = RunIn(ns, [&]() -> absl::Status {
    PacketSocketFactoryLinux factory;
    absl::StatusOr<std::unique_ptr<PacketSocket>> socket = factory.OpenLldp(ifindex, ifname);
    if (!socket.ok()) return socket.status();
    out = std::move(*socket);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace rocenet::os
