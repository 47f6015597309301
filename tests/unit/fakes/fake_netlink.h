// FakeNetlink: a scriptable kernel for unit tests of link handling.
//
// Holds a set of links; tests change them with SetLink/RemoveLink, which
// queue the event the kernel would send and make event_fd() readable (an
// eventfd), so code under test runs exactly as on the real event loop.
// Single-threaded like the real one.
#pragma once

#include <map>
#include <vector>

#include "daemon/os/netlink.h"

namespace rocenet::testing {

class FakeNetlink final : public os::Netlink {
 public:
  FakeNetlink();
  ~FakeNetlink() override;

  void SetLink(const os::LinkInfo& link);
  void RemoveLink(int ifindex);
  // The next ReadLinkEvents reports lost events.
  void Overflow();

  int list_calls() const { return list_calls_; }

  absl::Status SubscribeLinkEvents() override;
  int event_fd() const override { return subscribed_ ? fd_ : -1; }
  absl::StatusOr<os::LinkEventBatch> ReadLinkEvents() override;
  absl::StatusOr<std::vector<os::LinkInfo>> ListLinks() override;

 private:
  void Wake();

  int fd_;
  bool subscribed_ = false;
  int list_calls_ = 0;
  std::map<int, os::LinkInfo> links_;
  os::LinkEventBatch pending_;
};

// A veth-like link that is up with carrier.
os::LinkInfo MakeLink(int ifindex, const std::string& name);

}  // namespace rocenet::testing
