// SPDX-License-Identifier: Apache-2.0
// FakeNetlink: a scriptable kernel for unit tests of link handling.
//
// Holds a set of links; tests change them with SetLink/RemoveLink, which
// queue the event the kernel would send and make event_fd() readable (an
// eventfd), so code under test runs exactly as on the real event loop.
// Single-threaded like the real one.
#pragma once

#include <functional>
#include <map>
#include <string>
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
  const std::map<int, os::LinkInfo>& links() const { return links_; }

  // Called by MoveLink() before the link leaves, with the link as it is here;
  // a non-OK status fails the move and changes nothing. FakeNetns uses it to
  // make the link appear in the destination namespace.
  using MoveHook =
      std::function<absl::Status(const os::LinkInfo& link, int netns_fd,
                                 const std::string& new_name, const os::AfterMove& after)>;
  void set_on_move(MoveHook hook) { on_move_ = std::move(hook); }

  absl::Status SubscribeLinkEvents() override;
  int event_fd() const override { return subscribed_ ? fd_ : -1; }
  absl::StatusOr<os::LinkEventBatch> ReadLinkEvents() override;
  absl::StatusOr<std::vector<os::LinkInfo>> ListLinks() override;
  absl::Status SetLinkUp(int ifindex) override;
  absl::Status SetLinkDown(int ifindex) override;
  absl::Status SetMtu(int ifindex, uint32_t mtu) override;
  absl::Status SetIpv4Conf(int ifindex, os::Ipv4Conf key, uint32_t value) override;
  absl::Status RenameLink(int ifindex, absl::string_view name) override;
  // Removes the link from this fake (it went to another namespace); the
  // move is recorded in moves().
  absl::Status MoveLink(int ifindex, int netns_fd, absl::string_view new_name,
                        const os::AfterMove& after) override;
  absl::StatusOr<std::vector<os::RuleInfo>> ListRules() override;
  absl::Status AddRule(const os::RuleInfo& rule) override;
  absl::Status DeleteRule(const os::RuleInfo& rule) override;

  struct Move {
    int ifindex;
    int netns_fd;
    std::string new_name;
  };
  const std::vector<Move>& moves() const { return moves_; }
  const std::vector<os::RuleInfo>& rules() const { return rules_; }
  absl::StatusOr<std::vector<os::AddressInfo>> ListAddresses() override;
  absl::Status AddAddress(const os::AddressInfo& address) override;
  absl::Status DeleteAddress(const os::AddressInfo& address) override;
  absl::StatusOr<std::vector<os::RouteInfo>> ListRoutes(uint32_t table) override;
  absl::Status ReplaceRoute(const os::RouteInfo& route) override;
  absl::Status DeleteRoute(const os::RouteInfo& route) override;

  // Error injection for a whole operation: called before every mutating
  // request with its name ("MoveLink", "SetMtu", "AddAddress", ...); a
  // non-OK status fails that request, which then changes nothing. One hook
  // shared by several kernels (host and pod) numbers the steps of an
  // operation that spans them, so a test can fail each step in turn.
  using MutationHook = std::function<absl::Status(absl::string_view request)>;
  void set_on_mutation(MutationHook hook) { on_mutation_ = std::move(hook); }

  // The next mutating call fails with `status` (and changes nothing).
  void FailNext(absl::Status status) { FailAfter(0, std::move(status)); }
  // The mutating call after the next `successes` ones fails with `status`.
  void FailAfter(int successes, absl::Status status) {
    fail_next_ = std::move(status);
    fail_skip_ = successes;
  }
  // Mutating calls made so far (SetLinkUp, SetMtu, Add/Delete, Replace).
  int mutations() const { return mutations_; }
  const std::vector<os::AddressInfo>& addresses() const { return addresses_; }
  const std::vector<os::RouteInfo>& routes() const { return routes_; }
  // The IPv4 settings of a link in this kernel; reset when it leaves.
  std::map<os::Ipv4Conf, uint32_t> ipv4_conf(int ifindex) const {
    auto it = ipv4_conf_.find(ifindex);
    return it == ipv4_conf_.end() ? std::map<os::Ipv4Conf, uint32_t>{} : it->second;
  }
  const os::LinkInfo* link(int ifindex) const;
  // An edit by someone else (an admin with `ip`): queues the event.
  void ExternalDeleteAddress(const os::AddressInfo& address);

 private:
  // The shape of every link setting: fail if told to, else change the link
  // and queue its event.
  absl::Status ChangeLink(absl::string_view request, int ifindex,
                          const std::function<void(os::LinkInfo&)>& change);
  // Applies a pending failure or the mutation hook; true when the call
  // `request` must fail.
  bool TakeFailure(absl::string_view request, absl::Status* out);
  void AddressesChanged();
  void RoutesChanged();
  void Wake();

  int fd_;
  bool subscribed_ = false;
  int list_calls_ = 0;
  std::map<int, os::LinkInfo> links_;
  std::vector<os::AddressInfo> addresses_;
  std::vector<os::RouteInfo> routes_;
  std::vector<os::RuleInfo> rules_;
  std::map<int, std::map<os::Ipv4Conf, uint32_t>> ipv4_conf_;
  std::vector<Move> moves_;
  os::LinkEventBatch pending_;
  absl::Status fail_next_;
  int fail_skip_ = 0;
  MoveHook on_move_;
  MutationHook on_mutation_;
  int mutations_ = 0;
};

// A veth-like link that is up with carrier.
os::LinkInfo MakeLink(int ifindex, const std::string& name);

}  // namespace rocenet::testing
