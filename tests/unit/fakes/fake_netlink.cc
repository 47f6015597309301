#include "tests/unit/fakes/fake_netlink.h"

#include <sys/eventfd.h>
#include <unistd.h>

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
