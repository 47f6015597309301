// SPDX-License-Identifier: Apache-2.0
// Netlink errors injected at every step of the reconciler, one step at a
// time: the n-th kernel request of a pass fails, for n = 0, 1, ... until the
// pass makes fewer requests than n. The reconciler's contract is convergence,
// not rollback (undoing a half-moved address would take the port off the
// fabric for nothing): after each failure the error names the port and the
// step, no request after the failed one was made, nothing of anyone else was
// touched, the port never lost both its old and its new address, and the next
// pass from the same start finishes the job.
#include <map>
#include <string>
#include <vector>

#include "daemon/addressing/reconciler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::MakeLink;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr int kSo0 = 2;
constexpr int kMaxSteps = 40;

AppliedConfig Config(const char* local, const char* peer, uint32_t mtu) {
  AppliedConfig config;
  config.port_id = "0000:19:00.0-p8";
  config.ifname = "so0";
  config.local = P(local);
  config.peer = A(peer);
  config.routes = {Route{P("10.200.0.0/16"), A(peer)}, Route{P("10.210.0.0/16"), std::nullopt}};
  config.mtu = mtu;
  return config;
}

const std::map<std::string, std::string>& StepWords() {
  static const auto* words = new std::map<std::string, std::string>{
      {"SetLinkUp", "set link up"},  {"SetMtu", "set MTU"},
      {"AddAddress", "add address"}, {"DeleteAddress", "delete address"},
      {"ReplaceRoute", "add route"}, {"DeleteRoute", "delete route"}};
  return *words;
}

// A kernel in a given start state, built afresh for every injected step.
struct Start {
  const char* name;
  bool admin_up;
  uint32_t mtu;
  std::optional<AppliedConfig> previous;  // applied by rocenet before
  AppliedConfig wanted;
  bool remove = false;  // Remove(previous) instead of Apply(wanted)
};

void PrintTo(const Start& s, std::ostream* os) { *os << s.name; }

class ReconcilerFaultsTest : public ::testing::TestWithParam<Start> {
 protected:
  // so0 as the start state says, with rocenet's previous configuration in
  // place, and an address and a route of someone else's on it.
  void Build(FakeNetlink& kernel) {
    os::LinkInfo link = MakeLink(kSo0, "so0");
    link.admin_up = GetParam().admin_up;
    link.mtu = GetParam().mtu;
    kernel.SetLink(link);
    if (GetParam().previous.has_value()) {
      Reconciler reconciler(&kernel);
      os::LinkInfo up = link;
      up.admin_up = true;
      kernel.SetLink(up);
      ASSERT_TRUE(
          reconciler.Apply(Target(kernel), *GetParam().previous, std::nullopt, Kernel(kernel))
              .ok());
      kernel.SetLink(link);
    }
    ASSERT_OK(kernel.AddAddress({kSo0, P("192.168.7.1/24")}));
    ASSERT_TRUE(kernel
                    .ReplaceRoute(os::RouteInfo{P("172.16.0.0/12"), A("192.168.7.254"), kSo0,
                                                /*protocol=*/4, os::kMainTable, 0})
                    .ok());
  }

  static LinkTarget Target(const FakeNetlink& kernel) {
    const os::LinkInfo* link = kernel.link(kSo0);
    return LinkTarget{kSo0, link->name, link->admin_up, link->mtu};
  }
  static KernelState Kernel(FakeNetlink& kernel) {
    return KernelState{*kernel.ListAddresses(), *kernel.ListRoutes(os::kMainTable)};
  }

  absl::Status Pass(FakeNetlink& kernel) {
    Reconciler reconciler(&kernel);
    if (GetParam().remove) {
      return reconciler.Remove(Target(kernel), *GetParam().previous, Kernel(kernel)).status();
    }
    return reconciler.Apply(Target(kernel), GetParam().wanted, GetParam().previous, Kernel(kernel))
        .status();
  }

  bool Done(FakeNetlink& kernel) {
    const KernelState state = Kernel(kernel);
    if (GetParam().remove) {
      for (const os::AddressInfo& a : state.addresses) {
        if (a.prefix == *GetParam().previous->local) return false;
      }
      for (const os::RouteInfo& r : state.routes) {
        if (r.protocol == kRouteProtocol) return false;
      }
      return true;
    }
    return Reconciler::InPlace(Target(kernel), GetParam().wanted, state);
  }
};

TEST_P(ReconcilerFaultsTest, AFailureAtEveryStepNamesItStopsThereAndTheNextPassFinishes) {
  int steps = -1;
  for (int n = 0; n < kMaxSteps && steps < 0; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing request #" << n);
    FakeNetlink kernel;
    Build(kernel);
    std::vector<std::string> requests;
    std::string failed;
    kernel.set_on_mutation([&](absl::string_view request) -> absl::Status {
      requests.emplace_back(request);
      if (static_cast<int>(requests.size()) - 1 != n) return absl::OkStatus();
      failed = std::string(request);
      return absl::UnavailableError(absl::StrCat("injected failure of ", request));
    });
    const absl::Status status = Pass(kernel);
    kernel.set_on_mutation(nullptr);
    if (failed.empty()) {
      ASSERT_OK(status);
      EXPECT_TRUE(Done(kernel));
      steps = n;
      break;
    }
    ASSERT_FALSE(status.ok()) << "failing " << failed;
    EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
    ASSERT_TRUE(StepWords().contains(failed)) << failed;
    EXPECT_THAT(std::string(status.message()), HasSubstr("port so0: " + StepWords().at(failed)));
    EXPECT_THAT(std::string(status.message()), HasSubstr("injected failure of " + failed));
    EXPECT_EQ(static_cast<int>(requests.size()), n + 1) << "requests went on after the failure";
    // Someone else's address and route are where they were.
    EXPECT_THAT(kernel.addresses(), Contains(os::AddressInfo{kSo0, P("192.168.7.1/24")}));
    EXPECT_THAT(kernel.routes(), Contains(os::RouteInfo{P("172.16.0.0/12"), A("192.168.7.254"),
                                                        kSo0, 4, os::kMainTable, 0}));
    // Moving an address, the port always holds the old or the new one.
    if (!GetParam().remove && GetParam().previous.has_value()) {
      const bool has_some = std::any_of(
          kernel.addresses().begin(), kernel.addresses().end(), [&](const os::AddressInfo& a) {
            return a.prefix == *GetParam().previous->local || a.prefix == *GetParam().wanted.local;
          });
      EXPECT_TRUE(has_some) << "so0 had neither address after failing " << failed;
    }
    // The next pass, from what the kernel has now and the same record,
    // converges.
    const absl::Status again = Pass(kernel);
    ASSERT_OK(again);
    EXPECT_TRUE(Done(kernel)) << "after failing " << failed;
  }
  EXPECT_GT(steps, 0) << "the pass made no request at all";
}

INSTANTIATE_TEST_SUITE_P(
    Starts, ReconcilerFaultsTest,
    ::testing::Values(Start{"FirstConfiguration", /*admin_up=*/false, 1500, std::nullopt,
                            Config("10.200.1.1/30", "10.200.1.2", 9000)},
                      Start{"AddressMove", true, 9000, Config("10.200.1.1/30", "10.200.1.2", 9000),
                            Config("10.200.1.5/30", "10.200.1.6", 9000)},
                      Start{"AfterALinkFlap", false, 9000,
                            Config("10.200.1.1/30", "10.200.1.2", 9000),
                            Config("10.200.1.1/30", "10.200.1.2", 9000)},
                      Start{"Remove", true, 9000, Config("10.200.1.1/30", "10.200.1.2", 9000),
                            Config("10.200.1.1/30", "10.200.1.2", 9000), /*remove=*/true}),
    [](const ::testing::TestParamInfo<Start>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace rocenet::addressing
