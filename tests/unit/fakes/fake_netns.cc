// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_netns.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace rocenet::testing {
namespace {

class FakeHandle final : public os::NetnsHandle {
 public:
  FakeHandle(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd() const override { return fd_; }
  const std::string& path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

// A view of a FakeNetlink that the code under test may own and destroy while
// the test keeps looking at the kernel behind it.
class NetlinkView final : public os::Netlink {
 public:
  explicit NetlinkView(FakeNetlink* target) : target_(target) {}

  absl::Status SubscribeLinkEvents() override { return target_->SubscribeLinkEvents(); }
  int event_fd() const override { return target_->event_fd(); }
  absl::StatusOr<os::LinkEventBatch> ReadLinkEvents() override { return target_->ReadLinkEvents(); }
  absl::StatusOr<std::vector<os::LinkInfo>> ListLinks() override { return target_->ListLinks(); }
  absl::Status SetLinkUp(int ifindex) override { return target_->SetLinkUp(ifindex); }
  absl::Status SetLinkDown(int ifindex) override { return target_->SetLinkDown(ifindex); }
  absl::Status SetMtu(int ifindex, uint32_t mtu) override { return target_->SetMtu(ifindex, mtu); }
  absl::Status SetIpv4Conf(int ifindex, os::Ipv4Conf key, uint32_t value) override {
    return target_->SetIpv4Conf(ifindex, key, value);
  }
  absl::Status RenameLink(int ifindex, absl::string_view name) override {
    return target_->RenameLink(ifindex, name);
  }
  absl::Status MoveLink(int ifindex, int netns_fd, absl::string_view new_name,
                        const os::AfterMove& after) override {
    return target_->MoveLink(ifindex, netns_fd, new_name, after);
  }
  absl::StatusOr<std::vector<os::AddressInfo>> ListAddresses() override {
    return target_->ListAddresses();
  }
  absl::Status AddAddress(const os::AddressInfo& address) override {
    return target_->AddAddress(address);
  }
  absl::Status DeleteAddress(const os::AddressInfo& address) override {
    return target_->DeleteAddress(address);
  }
  absl::StatusOr<std::vector<os::RouteInfo>> ListRoutes(uint32_t table) override {
    return target_->ListRoutes(table);
  }
  absl::Status ReplaceRoute(const os::RouteInfo& route) override {
    return target_->ReplaceRoute(route);
  }
  absl::Status DeleteRoute(const os::RouteInfo& route) override {
    return target_->DeleteRoute(route);
  }
  absl::StatusOr<std::vector<os::RuleInfo>> ListRules() override { return target_->ListRules(); }
  absl::Status AddRule(const os::RuleInfo& rule) override { return target_->AddRule(rule); }
  absl::Status DeleteRule(const os::RuleInfo& rule) override { return target_->DeleteRule(rule); }

 private:
  FakeNetlink* target_;
};

bool HasLinkNamed(const FakeNetlink& netlink, const std::string& name) {
  for (const auto& [ifindex, link] : netlink.links()) {
    if (link.name == name) return true;
  }
  return false;
}

// The ifindex a link arriving in `netlink` gets: its own if free there.
int FreeIfindex(const FakeNetlink& netlink, int wanted) {
  if (netlink.link(wanted) == nullptr) return wanted;
  return netlink.links().rbegin()->first + 1;
}

}  // namespace

FakeNetns::FakeNetns(FakeNetlink* host, std::string host_path) {
  Namespace& ns = Add(host_path, host, nullptr);
  host_handle_ = std::make_unique<FakeHandle>(ns.fd, ns.path);
}

FakeNetns::~FakeNetns() {
  for (const auto& ns : namespaces_) ns->netlink->set_on_move(nullptr);
}

FakeNetns::Namespace& FakeNetns::Add(const std::string& path, FakeNetlink* netlink,
                                     std::unique_ptr<FakeNetlink> owned) {
  auto ns = std::make_unique<Namespace>();
  ns->path = path;
  ns->fd = next_fd_++;
  ns->netlink = netlink;
  ns->owned = std::move(owned);
  ns->sockets = std::make_unique<FakePacketSocketFactory>();
  netlink->set_on_move(
      [this](const os::LinkInfo& link, int netns_fd, const std::string& new_name,
             const os::AfterMove& after) { return Arrive(link, netns_fd, new_name, after); });
  namespaces_.push_back(std::move(ns));
  return *namespaces_.back();
}

FakeNetlink& FakeNetns::AddNamespace(const std::string& path) {
  auto owned = std::make_unique<FakeNetlink>();
  FakeNetlink* netlink = owned.get();
  Add(path, netlink, std::move(owned));
  return *netlink;
}

void FakeNetns::AddNotANetns(const std::string& path) { not_netns_.insert(path); }

FakeNetns::Namespace* FakeNetns::ByFd(int fd) const {
  for (const auto& ns : namespaces_) {
    if (ns->fd == fd) return ns.get();
  }
  return nullptr;
}

FakeNetns::Namespace* FakeNetns::ByPath(const std::string& path) const {
  for (const auto& ns : namespaces_) {
    if (ns->alive && ns->path == path) return ns.get();
  }
  return nullptr;
}

FakeNetlink* FakeNetns::netlink(const std::string& path) const {
  Namespace* ns = ByPath(path);
  return ns == nullptr ? nullptr : ns->netlink;
}

FakePacketSocketFactory* FakeNetns::sockets(const std::string& path) const {
  Namespace* ns = ByPath(path);
  return ns == nullptr ? nullptr : ns->sockets.get();
}

absl::Status FakeNetns::Arrive(const os::LinkInfo& link, int netns_fd, const std::string& new_name,
                               const os::AfterMove& after) {
  Namespace* to = ByFd(netns_fd);
  if (to == nullptr) return absl::InvalidArgumentError("move link: Bad file descriptor");
  if (!to->alive) return absl::InvalidArgumentError("move link: the namespace is gone");
  const std::string name = new_name.empty() ? link.name : new_name;
  if (HasLinkNamed(*to->netlink, name)) {
    return absl::AlreadyExistsError(absl::StrCat("move link ", link.name, ": File exists"));
  }
  os::LinkInfo arrived = link;
  arrived.ifindex = FreeIfindex(*to->netlink, link.ifindex);
  arrived.name = name;
  arrived.admin_up = after.up;  // closed to move, opened again if asked
  if (after.mtu != 0) arrived.mtu = after.mtu;
  to->netlink->SetLink(arrived);
  return absl::OkStatus();
}

void FakeNetns::DeleteNamespace(const std::string& path) {
  Namespace* ns = ByPath(path);
  if (ns == nullptr || ns->owned == nullptr) return;
  ns->alive = false;
  if (rdma_ != nullptr) rdma_->NamespaceDied(ns->fd);
  FakeNetlink& host = *namespaces_.front()->netlink;
  const std::map<int, os::LinkInfo> links = ns->netlink->links();
  for (const auto& [ifindex, link] : links) {
    if (!link.kind.empty() || link.name == "lo") {
      // Virtual devices are destroyed with the namespace.
      ns->netlink->RemoveLink(ifindex);
      continue;
    }
    os::LinkInfo back = link;
    back.ifindex = FreeIfindex(host, link.ifindex);
    if (HasLinkNamed(host, link.name)) back.name = absl::StrCat("dev", back.ifindex);
    back.admin_up = false;
    ns->netlink->RemoveLink(ifindex);
    host.SetLink(back);
  }
  for (const os::AddressInfo& address : std::vector<os::AddressInfo>(ns->netlink->addresses())) {
    ns->netlink->ExternalDeleteAddress(address);
  }
}

absl::StatusOr<std::unique_ptr<os::NetnsHandle>> FakeNetns::Open(absl::string_view path) {
  ++open_calls_;
  const std::string p(path);
  if (not_netns_.contains(p)) {
    return absl::FailedPreconditionError(absl::StrCat(p, " is not a network namespace"));
  }
  Namespace* ns = ByPath(p);
  if (ns == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("network namespace ", p, ": No such file or directory"));
  }
  return std::unique_ptr<os::NetnsHandle>(new FakeHandle(ns->fd, ns->path));
}

absl::StatusOr<std::unique_ptr<os::Netlink>> FakeNetns::OpenNetlink(const os::NetnsHandle& handle) {
  if (!open_netlink_failure_.ok()) return std::exchange(open_netlink_failure_, absl::OkStatus());
  Namespace* ns = ByFd(handle.fd());
  if (ns == nullptr) return absl::InvalidArgumentError("netlink: Bad file descriptor");
  return std::unique_ptr<os::Netlink>(new NetlinkView(ns->netlink));
}

absl::StatusOr<std::unique_ptr<os::Rdma>> FakeNetns::OpenRdma(const os::NetnsHandle& handle) {
  if (rdma_ == nullptr) return absl::UnavailableError("RDMA netlink: Protocol not supported");
  if (ByFd(handle.fd()) == nullptr) return absl::InvalidArgumentError("rdma: Bad file descriptor");
  return rdma_->ViewFrom(handle.fd());
}

absl::StatusOr<std::unique_ptr<os::PacketSocket>> FakeNetns::OpenLldp(const os::NetnsHandle& handle,
                                                                      int ifindex,
                                                                      absl::string_view ifname) {
  Namespace* ns = ByFd(handle.fd());
  if (ns == nullptr) return absl::InvalidArgumentError("packet socket: Bad file descriptor");
  if (ns->netlink->link(ifindex) == nullptr) {
    return absl::NotFoundError(absl::StrCat("bind ", ifname, ": No such device"));
  }
  return ns->sockets->OpenLldp(ifindex, ifname);
}

os::LinkInfo MakePhysicalLink(int ifindex, const std::string& name) {
  os::LinkInfo link = MakeLink(ifindex, name);
  link.kind = "";
  link.mac = MacAddress({0x0c, 0x42, 0xa1, 0, 0, static_cast<uint8_t>(ifindex)});
  link.permanent_mac = link.mac;
  return link;
}

}  // namespace rocenet::testing
