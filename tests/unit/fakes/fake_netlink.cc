// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_netlink.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rocenet::testing {

FakeNetlink::FakeNetlink() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
FakeNetlink::~FakeNetlink() { close(fd_); }

void FakeNetlink::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof(one));
}

void FakeNetlink::SetLink(const os::LinkInfo& link) {
  links_[link.ifindex] = link;
  if (!subscribed_) return;
  pending_.events.push_back({os::LinkEvent::Type::kChanged, link});
  Wake();
}

void FakeNetlink::RemoveLink(int ifindex) {
  auto it = links_.find(ifindex);
  if (it == links_.end()) return;
  os::LinkInfo gone = it->second;
  links_.erase(it);
  if (!subscribed_) return;
  pending_.events.push_back({os::LinkEvent::Type::kRemoved, gone});
  Wake();
}

void FakeNetlink::Overflow() {
  pending_.overflowed = true;
  pending_.events.clear();
  Wake();
}

absl::Status FakeNetlink::SubscribeLinkEvents() {
  subscribed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<os::LinkEventBatch> FakeNetlink::ReadLinkEvents() {
  uint64_t count;
  [[maybe_unused]] ssize_t n = read(fd_, &count, sizeof(count));
  os::LinkEventBatch out = std::move(pending_);
  pending_ = {};
  return out;
}

absl::StatusOr<std::vector<os::LinkInfo>> FakeNetlink::ListLinks() {
  ++list_calls_;
  std::vector<os::LinkInfo> out;
  for (const auto& [ifindex, link] : links_) out.push_back(link);
  return out;
}

bool FakeNetlink::TakeFailure(absl::string_view request, absl::Status* out) {
  if (on_mutation_) {
    if (absl::Status injected = on_mutation_(request); !injected.ok()) {
      *out = std::move(injected);
      return true;
    }
  }
  if (fail_next_.ok()) return false;
  if (fail_skip_ > 0) {
    --fail_skip_;
    return false;
  }
  *out = std::move(fail_next_);
  fail_next_ = absl::OkStatus();
  return true;
}

void FakeNetlink::AddressesChanged() {
  if (!subscribed_) return;
  pending_.addresses_changed = true;
  Wake();
}

void FakeNetlink::RoutesChanged() {
  if (!subscribed_) return;
  pending_.routes_changed = true;
  Wake();
}

const os::LinkInfo* FakeNetlink::link(int ifindex) const {
  auto it = links_.find(ifindex);
  return it == links_.end() ? nullptr : &it->second;
}

absl::Status FakeNetlink::ChangeLink(absl::string_view request, int ifindex,
                                     const std::function<void(os::LinkInfo&)>& change) {
  absl::Status failure;
  if (TakeFailure(request, &failure)) return failure;
  auto it = links_.find(ifindex);
  if (it == links_.end()) return absl::NotFoundError("no such link");
  ++mutations_;
  os::LinkInfo link = it->second;
  change(link);
  SetLink(link);
  return absl::OkStatus();
}

absl::Status FakeNetlink::SetLinkUp(int ifindex) {
  return ChangeLink("SetLinkUp", ifindex, [&](os::LinkInfo& link) { link.admin_up = true; });
}

absl::Status FakeNetlink::SetLinkDown(int ifindex) {
  return ChangeLink("SetLinkDown", ifindex, [&](os::LinkInfo& link) { link.admin_up = false; });
}

absl::Status FakeNetlink::RenameLink(int ifindex, absl::string_view name) {
  // As the kernel: a name is one device's (EEXIST).
  for (const auto& [other, link] : links_) {
    if (other != ifindex && link.name == name) {
      return absl::AlreadyExistsError(absl::StrCat("RenameLink: ", name, " exists"));
    }
  }
  return ChangeLink("RenameLink", ifindex,
                    [&](os::LinkInfo& link) { link.name = std::string(name); });
}

absl::Status FakeNetlink::MoveLink(int ifindex, int netns_fd, absl::string_view new_name,
                                   const os::AfterMove& after) {
  absl::Status failure;
  if (TakeFailure("MoveLink", &failure)) return failure;
  auto it = links_.find(ifindex);
  if (it == links_.end()) return absl::NotFoundError("no such link");
  if (on_move_) {
    if (absl::Status arrived = on_move_(it->second, netns_fd, std::string(new_name), after);
        !arrived.ok()) {
      return arrived;
    }
  }
  ++mutations_;
  moves_.push_back({ifindex, netns_fd, std::string(new_name)});
  std::erase_if(addresses_, [&](const os::AddressInfo& a) { return a.ifindex == ifindex; });
  std::erase_if(routes_, [&](const os::RouteInfo& r) { return r.ifindex == ifindex; });
  ipv4_conf_.erase(ifindex);
  RemoveLink(ifindex);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<os::RuleInfo>> FakeNetlink::ListRules() { return rules_; }

absl::Status FakeNetlink::AddRule(const os::RuleInfo& rule) {
  absl::Status failure;
  if (TakeFailure("AddRule", &failure)) return failure;
  ++mutations_;
  if (std::find(rules_.begin(), rules_.end(), rule) == rules_.end()) rules_.push_back(rule);
  return absl::OkStatus();
}

absl::Status FakeNetlink::DeleteRule(const os::RuleInfo& rule) {
  absl::Status failure;
  if (TakeFailure("DeleteRule", &failure)) return failure;
  ++mutations_;
  std::erase(rules_, rule);
  return absl::OkStatus();
}

absl::Status FakeNetlink::SetMtu(int ifindex, uint32_t mtu) {
  return ChangeLink("SetMtu", ifindex, [&](os::LinkInfo& link) { link.mtu = mtu; });
}

absl::Status FakeNetlink::SetIpv4Conf(int ifindex, os::Ipv4Conf key, uint32_t value) {
  absl::Status failure;
  if (TakeFailure("SetIpv4Conf", &failure)) return failure;
  if (!links_.contains(ifindex)) return absl::NotFoundError("no such link");
  ++mutations_;
  ipv4_conf_[ifindex][key] = value;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<os::AddressInfo>> FakeNetlink::ListAddresses() { return addresses_; }

absl::Status FakeNetlink::AddAddress(const os::AddressInfo& address) {
  absl::Status failure;
  if (TakeFailure("AddAddress", &failure)) return failure;
  ++mutations_;
  if (std::find(addresses_.begin(), addresses_.end(), address) == addresses_.end()) {
    addresses_.push_back(address);
    // The kernel adds the connected route with the address.
    routes_.push_back({address.prefix.Network(), std::nullopt, address.ifindex,
                       /*protocol=*/2, os::kMainTable, 0});
  }
  AddressesChanged();
  return absl::OkStatus();
}

absl::Status FakeNetlink::DeleteAddress(const os::AddressInfo& address) {
  absl::Status failure;
  if (TakeFailure("DeleteAddress", &failure)) return failure;
  ++mutations_;
  ExternalDeleteAddress(address);
  return absl::OkStatus();
}

void FakeNetlink::ExternalDeleteAddress(const os::AddressInfo& address) {
  std::erase(addresses_, address);
  // With the address go the routes that depended on it.
  std::erase_if(routes_, [&](const os::RouteInfo& r) {
    return r.ifindex == address.ifindex &&
           (r.destination == address.prefix.Network() ||
            (r.gateway.has_value() && address.prefix.Contains(*r.gateway)));
  });
  AddressesChanged();
}

absl::StatusOr<std::vector<os::RouteInfo>> FakeNetlink::ListRoutes(uint32_t table) {
  std::vector<os::RouteInfo> out;
  for (const os::RouteInfo& route : routes_) {
    if (route.table == table) out.push_back(route);
  }
  return out;
}

absl::Status FakeNetlink::ReplaceRoute(const os::RouteInfo& route) {
  absl::Status failure;
  if (TakeFailure("ReplaceRoute", &failure)) return failure;
  if (route.gateway.has_value()) {
    const bool reachable = std::any_of(addresses_.begin(), addresses_.end(), [&](const auto& a) {
      return a.ifindex == route.ifindex && a.prefix.Contains(*route.gateway);
    });
    if (!reachable) return absl::InvalidArgumentError("Nexthop has invalid gateway");
  }
  ++mutations_;
  std::erase_if(routes_, [&](const os::RouteInfo& r) {
    return r.destination == route.destination && r.table == route.table && r.metric == route.metric;
  });
  routes_.push_back(route);
  RoutesChanged();
  return absl::OkStatus();
}

absl::Status FakeNetlink::DeleteRoute(const os::RouteInfo& route) {
  absl::Status failure;
  if (TakeFailure("DeleteRoute", &failure)) return failure;
  ++mutations_;
  std::erase(routes_, route);
  RoutesChanged();
  return absl::OkStatus();
}

os::LinkInfo MakeLink(int ifindex, const std::string& name) {
  os::LinkInfo link;
  link.ifindex = ifindex;
  link.name = name;
  link.mac = MacAddress({0x02, 0, 0, 0, 0, static_cast<uint8_t>(ifindex)});
  link.mtu = 1500;
  link.min_mtu = 68;
  link.max_mtu = 65535;
  link.admin_up = true;
  link.carrier = true;
  link.oper_state = os::OperState::kUp;
  link.speed_mbps = 100000;
  link.kind = "veth";
  return link;
}

}  // namespace rocenet::testing
