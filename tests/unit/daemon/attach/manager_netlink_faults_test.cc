// SPDX-License-Identifier: Apache-2.0
// Netlink errors injected at every step of the attach manager's operations,
// one step at a time: the n-th kernel request of the operation (host and pod
// kernels counted together) fails, for n = 0, 1, ... until the operation
// makes fewer requests than n. After each failure the error names the step,
// and the host, the pod and the journal are back where they started (attach,
// re-address) or a retry finishes the job (detach, which must not strand a
// port halfway home).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeNetlink;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// What the error must say when a request of this kind fails.
const std::map<std::string, std::string>& StepWords() {
  static const auto* words =
      new std::map<std::string, std::string>{{"MoveLink", "move"},
                                             {"SetMtu", "set MTU"},
                                             {"SetLinkUp", "set link up"},
                                             {"SetIpv4Conf", "set arp_"},
                                             {"SetLinkDown", "set link down"},
                                             {"RenameLink", "rename"},
                                             {"AddAddress", "add address"},
                                             {"DeleteAddress", "delete address"},
                                             {"ReplaceRoute", "add route"},
                                             {"DeleteRoute", "delete route"},
                                             {"AddRule", "add rule"},
                                             {"DeleteRule", "delete rule"}};
  return *words;
}

// Fails the `fail_at`-th mutating request seen by any kernel it is installed
// on, and remembers every request.
class Injector {
 public:
  explicit Injector(int fail_at) : fail_at_(fail_at) {}
  void Install(FakeNetlink& kernel) {
    kernel.set_on_mutation([this](absl::string_view request) -> absl::Status {
      const int step = static_cast<int>(requests_.size());
      requests_.emplace_back(request);
      if (step != fail_at_) return absl::OkStatus();
      failed_ = std::string(request);
      return absl::InternalError(absl::StrCat("injected failure of ", request));
    });
  }
  static void Remove(FakeNetlink& kernel) { kernel.set_on_mutation(nullptr); }
  bool fired() const { return !failed_.empty(); }
  const std::string& failed() const { return failed_; }
  const std::vector<std::string>& requests() const { return requests_; }

 private:
  int fail_at_;
  std::vector<std::string> requests_;
  std::string failed_;
};

// Everything `ip` would show of one kernel, in a stable order. Link indexes
// are left out: a port that went to a pod and came back may have another.
struct KernelView {
  std::vector<std::string> links;
  std::vector<std::string> addresses;
  std::vector<std::string> routes;
  std::vector<std::string> rules;
  friend bool operator==(const KernelView&, const KernelView&) = default;
};

template <typename T>
std::vector<std::string> Sorted(const std::vector<T>& items) {
  std::vector<std::string> out;
  for (const T& item : items) out.push_back(::testing::PrintToString(item));
  std::sort(out.begin(), out.end());
  return out;
}

KernelView View(const FakeNetlink& kernel) {
  KernelView view;
  for (const auto& [ifindex, link] : kernel.links()) {
    view.links.push_back(absl::StrCat(link.name, " ", link.mac.ToString(),
                                      link.admin_up ? " up" : " down", " mtu ", link.mtu));
  }
  std::sort(view.links.begin(), view.links.end());
  view.addresses = Sorted(kernel.addresses());
  view.routes = Sorted(kernel.routes());
  view.rules = Sorted(kernel.rules());
  return view;
}

void PrintTo(const KernelView& view, std::ostream* os) {
  for (const auto* part : {&view.links, &view.addresses, &view.routes, &view.rules}) {
    for (const std::string& line : *part) *os << "\n  " << line;
  }
}

class AttachNetlinkFaultsTest : public AttachManagerTest {
 protected:
  AttachNetlinkFaultsTest() {
    // The host has the port as its addressing left it: MTU from the plan.
    for (int ifindex : {kSo0, kSo1}) {
      os::LinkInfo link = *host_.link(ifindex);
      link.mtu = 9000;
      host_.SetLink(link);
    }
    // And the node reports it so.
    for (PortCandidate& port : ports_) port.mtu = 9000;
  }

  struct World {
    KernelView host;
    KernelView pod;
    std::vector<AttachmentRecord> journal;
    friend bool operator==(const World&, const World&) = default;
    friend void PrintTo(const World& w, std::ostream* os) {
      *os << "\nhost:";
      PrintTo(w.host, os);
      *os << "\npod:";
      PrintTo(w.pod, os);
      *os << "\njournal:";
      for (const AttachmentRecord& r : w.journal) *os << " " << ::testing::PrintToString(r);
    }
  };

  World Now() { return World{View(host_), View(*pod_), OnDisk()}; }

  void Inject(Injector& injector) {
    injector.Install(host_);
    injector.Install(*pod_);
  }
  void StopInjecting() {
    Injector::Remove(host_);
    Injector::Remove(*pod_);
  }

  // The error names the operation and the step that failed.
  static void ExpectNamesStep(const absl::Status& status, const Injector& injector,
                              absl::string_view operation) {
    ASSERT_TRUE(StepWords().contains(injector.failed())) << injector.failed();
    EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(operation)));
    EXPECT_THAT(std::string(status.message()), HasSubstr(StepWords().at(injector.failed())))
        << "failing " << injector.failed();
    EXPECT_THAT(std::string(status.message()), HasSubstr("injected failure of"));
  }
};

constexpr int kMaxSteps = 40;  // far more than any operation makes

TEST_F(AttachNetlinkFaultsTest, AttachRollsBackFromAFailureAtEveryStep) {
  const World start = Now();
  int steps = 0;
  uint32_t table = 0;
  for (int n = 0; n < kMaxSteps; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing request #" << n);
    Injector injector(n);
    Inject(injector);
    absl::StatusOr<AttachmentRecord> record = Attach(Request());
    StopInjecting();
    if (!injector.fired()) {
      // Past the last step: the attach went through.
      ASSERT_OK(record);
      steps = n;
      table = record->table;
      break;
    }
    ASSERT_FALSE(record.ok()) << "request #" << n << " (" << injector.failed() << ") failed";
    ExpectNamesStep(record.status(), injector, "attach port so0 to /var/run/netns/pod1 as net1");
    EXPECT_EQ(Now(), start) << "after failing " << injector.failed();
    EXPECT_THAT(manager_->List(), IsEmpty());
  }
  // move, MTU, up, arp_ignore, arp_announce, address, 3 routes, rule.
  EXPECT_EQ(steps, 10);
  // so0's table follows its host ifindex, which the moves may have changed.
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", table);
}

TEST_F(AttachNetlinkFaultsTest, DetachFailingAtAnyStepKeepsTheRecordAndARetryBringsThePortHome) {
  int steps = 0;
  for (int n = 0; n < kMaxSteps; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing request #" << n);
    ASSERT_OK(Attach(Request()));
    const World attached = Now();
    Injector injector(n);
    Inject(injector);
    absl::StatusOr<bool> detached = manager_->Detach("c1", "net1");
    StopInjecting();
    if (!injector.fired()) {
      ASSERT_OK(detached);
      steps = n;
      break;
    }
    if (detached.ok()) {
      // Only the pod's rule is best-effort: the port leaves anyway, and the
      // rule without its table's routes matches nothing.
      EXPECT_EQ(injector.failed(), "DeleteRule");
      ASSERT_FALSE(pod_->rules().empty());
      ASSERT_OK(pod_->DeleteRule(pod_->rules().front()));
    } else {
      ExpectNamesStep(detached.status(), injector, "detach port so0 from /var/run/netns/pod1");
      // The record stays, so the runtime's retried DEL finds it.
      ASSERT_EQ(OnDisk().size(), 1u);
      EXPECT_EQ(OnDisk()[0].state, AttachState::kDetaching);
      if (injector.failed() == "MoveLink") {
        EXPECT_EQ(View(*pod_).links, attached.pod.links) << "the port left the pod anyway";
      }
      absl::StatusOr<bool> retried = manager_->Detach("c1", "net1");
      ASSERT_OK(retried);
      EXPECT_TRUE(*retried);
    }
    ExpectInHost("so0", so0_mac_, pod_);
    EXPECT_EQ(Named(*pod_, "net1"), nullptr);
    EXPECT_THAT(pod_->rules(), IsEmpty());
    EXPECT_THAT(OnDisk(), IsEmpty());
  }
  // rule, then the move back (name, MTU and up in the same request).
  EXPECT_EQ(steps, 2);
}

TEST_F(AttachNetlinkFaultsTest, ReaddressRollsBackFromAFailureAtEveryStep) {
  addressing::AddressPlan plan;
  plan.port_id = kPort0;
  plan.state = addressing::PlanState::kReady;
  plan.local = P("10.200.1.5/30");
  plan.peer = A("10.200.1.6");
  plan.routes = {addressing::Route{P("10.200.0.0/16"), A("10.200.1.6")}};
  ASSERT_OK(Attach(Request()));
  const World start = Now();
  int steps = 0;
  for (int n = 0; n < kMaxSteps; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing request #" << n);
    Injector injector(n);
    Inject(injector);
    absl::StatusOr<bool> moved = manager_->Readdress(kPort0, plan);
    StopInjecting();
    if (!injector.fired()) {
      ASSERT_OK(moved);
      EXPECT_TRUE(*moved);
      steps = n;
      break;
    }
    ASSERT_FALSE(moved.ok()) << "request #" << n << " (" << injector.failed() << ") failed";
    ExpectNamesStep(moved.status(), injector, "");
    // The pod keeps its working address and the journal says so, so the
    // next pass tries the move again instead of taking it as done.
    EXPECT_EQ(Now(), start) << "after failing " << injector.failed();
  }
  EXPECT_GT(steps, 4);
  ExpectConfiguredInPod(*pod_, "10.200.1.5/30", "10.200.1.6", 1000 + kSo0);
  ASSERT_EQ(OnDisk().size(), 1u);
  EXPECT_EQ(OnDisk()[0].local, P("10.200.1.5/30"));
}

}  // namespace
}  // namespace rocenet::attach
