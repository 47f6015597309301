// SPDX-License-Identifier: Apache-2.0
// FakeNetns: network namespaces for unit tests, each with a kernel of its own.
//
// Every namespace is a path (as the CNI runtime hands it over) backed by a
// FakeNetlink: the host one is the test's, given at construction; pod
// namespaces are created by AddNamespace() and owned here, and the test keeps
// inspecting them. OpenNetlink() hands out non-owning views of those fakes.
//
// Link moves behave as in the kernel: FakeNetlink::MoveLink() to a handle's
// fd makes the link appear in that namespace under the new name, admin down,
// keeping its ifindex when it is free there; a move onto a name already taken
// there fails with AlreadyExists and changes nothing. DeleteNamespace() is
// the pod going away: its path no longer opens, virtual devices (those with
// an rtnetlink kind, like veth) are destroyed with it, and physical devices
// (no kind) go back to the host, admin down, under their name if it is free
// there and "dev<ifindex>" otherwise, as default_device_exit() does.
//
// Single-threaded. The host fake
// must outlive this object, and what it hands out must not.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/os/netns.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_packet_socket.h"
#include "tests/unit/fakes/fake_rdma.h"

namespace rocenet::testing {

class FakeNetns final : public os::Netns {
 public:
  explicit FakeNetns(FakeNetlink* host, std::string host_path = "/proc/1/ns/net");
  ~FakeNetns() override;

  // A new, empty network namespace at `path`; returns its kernel.
  FakeNetlink& AddNamespace(const std::string& path);
  // `path` exists but is something else (Open fails with FailedPrecondition).
  void AddNotANetns(const std::string& path);
  // The namespace at `path` dies (see above). Handles and netlink views
  // already open keep pointing at its now empty kernel.
  void DeleteNamespace(const std::string& path);

  // The kernel of the live namespace at `path`, or nullptr.
  FakeNetlink* netlink(const std::string& path) const;
  // The LLDP sockets opened inside the live namespace at `path`, or nullptr.
  FakePacketSocketFactory* sockets(const std::string& path) const;

  // The RDMA subsystem OpenRdma() views (not owned); without one OpenRdma()
  // is Unavailable, as on a kernel without RDMA. Namespaces that die hand
  // their RDMA devices back to it.
  void SetRdma(FakeRdma* rdma) { rdma_ = rdma; }

  // The next OpenNetlink() fails with `status`.
  void FailNextOpenNetlink(absl::Status status) { open_netlink_failure_ = std::move(status); }
  int open_calls() const { return open_calls_; }

  absl::StatusOr<std::unique_ptr<os::NetnsHandle>> Open(absl::string_view path) override;
  const os::NetnsHandle& host() const override { return *host_handle_; }
  bool IsHost(const os::NetnsHandle& ns) const override { return ns.fd() == host_handle_->fd(); }
  absl::StatusOr<std::unique_ptr<os::Netlink>> OpenNetlink(const os::NetnsHandle& ns) override;
  absl::StatusOr<std::unique_ptr<os::Rdma>> OpenRdma(const os::NetnsHandle& ns) override;
  absl::StatusOr<std::unique_ptr<os::PacketSocket>> OpenLldp(const os::NetnsHandle& ns, int ifindex,
                                                             absl::string_view ifname) override;

 private:
  struct Namespace {
    std::string path;
    int fd = -1;
    FakeNetlink* netlink = nullptr;
    std::unique_ptr<FakeNetlink> owned;  // null for the host
    std::unique_ptr<FakePacketSocketFactory> sockets;
    bool alive = true;
  };

  Namespace& Add(const std::string& path, FakeNetlink* netlink, std::unique_ptr<FakeNetlink> owned);
  FakeRdma* rdma_ = nullptr;
  Namespace* ByFd(int fd) const;
  Namespace* ByPath(const std::string& path) const;
  // Makes `link` appear in the namespace of `netns_fd` as `new_name`.
  absl::Status Arrive(const os::LinkInfo& link, int netns_fd, const std::string& new_name,
                      const os::AfterMove& after);

  std::vector<std::unique_ptr<Namespace>> namespaces_;
  std::unique_ptr<os::NetnsHandle> host_handle_;
  std::set<std::string> not_netns_;
  int next_fd_ = 1000;
  int open_calls_ = 0;
  absl::Status open_netlink_failure_;
};

// A physical port as the kernel shows it: up with carrier, no rtnetlink kind,
// and a permanent MAC equal to its address.
os::LinkInfo MakePhysicalLink(int ifindex, const std::string& name);

}  // namespace rocenet::testing
