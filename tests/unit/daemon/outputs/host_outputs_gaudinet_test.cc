// SPDX-License-Identifier: Apache-2.0
// The host gaudinet.json: what it lists while some ports are down or
// unaddressed, as HCL takes it (docs/rocenetd.md), and when it is left as
// it is.
#include <string>
#include <vector>

#include "daemon/outputs/host_outputs.h"
#include "daemon/outputs/renderers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/outputs/host_outputs_fixture.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::outputs {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeFileSystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;
using namespace fixture;  // NOLINT(build/namespaces): the shared helpers

TEST(HostGaudinetTest, AnUpPortWithoutAnAddressLeavesGaudinetUntouched) {
  FakeFileSystem fs;
  fs.AddFile(kGaudinet, "from the last job\n");
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  PortOutput pending = Ready("so1", 1);
  pending.provisioned = false;
  pending.up = true;

  ASSERT_OK(outputs.Update({Ready("so0", 0), pending}));

  EXPECT_THAT(Content(fs, kGaudinet), Optional(std::string("from the last job\n")));
  EXPECT_EQ(fs.WriteCount(kGaudinet), 0);
  EXPECT_THAT(outputs.gaudinet_missing(), ElementsAre("so1"));
}

TEST(HostGaudinetTest, ADownPortWithoutAnAddressIsLeftOutOfGaudinetAndNamed) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  PortOutput cable_out = Ready("so1", 1);
  cable_out.provisioned = false;
  cable_out.healthy = false;

  ASSERT_OK(outputs.Update({Ready("so0", 0), cable_out, Ready("so2", 2)}));

  EXPECT_EQ(Content(fs, kGaudinet),
            RenderGaudinet(PlanGaudinet({Ready("so0", 0), Ready("so2", 2)})));
  EXPECT_THAT(outputs.gaudinet_missing(), ElementsAre("so1"));
  // The cable in, the port addressed: listed, and nothing missing.
  ASSERT_OK(outputs.Update({Ready("so0", 0), Ready("so1", 1), Ready("so2", 2)}));
  EXPECT_EQ(Content(fs, kGaudinet),
            RenderGaudinet(PlanGaudinet({Ready("so0", 0), Ready("so1", 1), Ready("so2", 2)})));
  EXPECT_THAT(outputs.gaudinet_missing(), IsEmpty());
}

TEST(HostGaudinetTest, GaudinetWrittenOnceWhenEveryL3PortIsProvisioned) {
  FakeFileSystem fs;  // /etc/habanalabs does not exist yet
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  PortOutput so1 = Ready("so1", 1);
  so1.provisioned = false;
  so1.up = true;
  ASSERT_OK(outputs.Update({Ready("so0", 0), so1}));
  EXPECT_FALSE(fs.GetFile(kGaudinet).has_value());

  so1.provisioned = true;
  const std::vector<PortOutput> ports = {so1, Ready("so0", 0)};
  ASSERT_OK(outputs.Update(ports));

  std::optional<FakeFileSystem::File> file = fs.GetFile(kGaudinet);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->content, RenderGaudinet(PlanGaudinet(ports)));
  EXPECT_EQ(file->mode, 0644u);
  EXPECT_EQ(fs.WriteCount(kGaudinet), 1);
}

TEST(HostGaudinetTest, UnknownGatewayMacHoldsGaudinetBack) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  PortOutput so0 = Ready("so0", 0);
  so0.gateway_mac.clear();

  ASSERT_OK(outputs.Update({so0}));

  EXPECT_FALSE(fs.GetFile(kGaudinet).has_value());
}

TEST(HostGaudinetTest, L2OnlyNodeWritesNoGaudinet) {
  FakeFileSystem fs;
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, AllOutputs());
  PortOutput so0 = Ready("so0", 0);
  so0.l3 = false;

  ASSERT_OK(outputs.Update({so0}));

  EXPECT_FALSE(fs.GetFile(kGaudinet).has_value());
  EXPECT_TRUE(fs.GetFile(kNfd).has_value());
}

TEST(HostGaudinetTest, GaudinetListsOnlyGaudiPortsInL3AndMakesItsDirectory) {
  FakeFileSystem fs;  // no /etc/habanalabs yet
  FakeClock clock;
  HostOutputs outputs(&fs, &clock, OutputConfig{});  // the default path
  PortOutput other = Ready("eth5", 5);
  other.gaudi = false;
  other.provisioned = false;  // not Gaudi: neither listed nor waited for
  ASSERT_OK(outputs.Update({Ready("so1", 1), other}));
  std::optional<std::string> text = Content(fs, kDefaultGaudinetPath);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("10.200.1.1"), std::string::npos);
  EXPECT_EQ(text->find("10.200.5.1"), std::string::npos);
  // In L2 no file: its presence would mean L3 to HCL.
  PortOutput l2 = Ready("so1", 1);
  l2.l3 = false;
  FakeFileSystem fresh;
  HostOutputs l2_outputs(&fresh, &clock, OutputConfig{});
  ASSERT_OK(l2_outputs.Update({l2, other}));
  EXPECT_FALSE(fresh.GetFile(kDefaultGaudinetPath).has_value());
}

}  // namespace
}  // namespace rocenet::outputs
