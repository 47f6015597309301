// SPDX-License-Identifier: Apache-2.0
// The ADD result per CNI version against golden JSON (exact text, key order
// included), chaining onto prevResult, and CHECK's comparison.
#include "plugins/cni/result.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/cni/errors.h"
#include "tests/unit/plugins/cni/dispatch_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::cni {
namespace {

using Json = nlohmann::ordered_json;
using ::rocenet::cni::testutil::kNetns;
using ::testing::HasSubstr;

v1::Attachment Sample() {
  v1::Attachment attachment;
  attachment.set_container_id("3f6940ab5ab43bc5");
  attachment.set_ifname("net1");
  attachment.set_port_id("0000:19:00.0-p8");
  attachment.set_host_ifname("so0");
  attachment.set_mac("b0:fd:0b:00:00:00");
  attachment.set_mtu(8000);
  attachment.set_pci_address("0000:19:00.0");
  v1::IpConfig* ip = attachment.add_ips();
  ip->set_address("10.200.1.1/30");
  ip->set_gateway("10.200.1.2");
  v1::RouteConfig* route = attachment.add_routes();
  route->set_destination("10.200.0.0/16");
  route->set_gateway("10.200.1.2");
  return attachment;
}

std::string Render(absl::string_view version, const v1::Attachment& attachment,
                   const std::optional<Json>& prev = std::nullopt) {
  return RenderAddResult(version, attachment, "net1", kNetns, prev).dump();
}

TEST(RenderAddResultTest, Version040) {
  EXPECT_EQ(
      Render("0.4.0", Sample()),
      R"({"cniVersion":"0.4.0",)"
      R"("interfaces":[{"name":"net1","mac":"b0:fd:0b:00:00:00","sandbox":"/var/run/netns/pod1"}],)"
      R"("ips":[{"version":"4","address":"10.200.1.1/30","gateway":"10.200.1.2","interface":0}],)"
      R"("routes":[{"dst":"10.200.0.0/16","gw":"10.200.1.2"}]})");
}

TEST(RenderAddResultTest, Version100) {
  EXPECT_EQ(
      Render("1.0.0", Sample()),
      R"({"cniVersion":"1.0.0",)"
      R"("interfaces":[{"name":"net1","mac":"b0:fd:0b:00:00:00","sandbox":"/var/run/netns/pod1"}],)"
      R"("ips":[{"address":"10.200.1.1/30","gateway":"10.200.1.2","interface":0}],)"
      R"("routes":[{"dst":"10.200.0.0/16","gw":"10.200.1.2"}]})");
}

TEST(RenderAddResultTest, Version110HasMtuAndPciId) {
  EXPECT_EQ(Render("1.1.0", Sample()),
            R"({"cniVersion":"1.1.0",)"
            R"("interfaces":[{"name":"net1","mac":"b0:fd:0b:00:00:00","mtu":8000,)"
            R"("sandbox":"/var/run/netns/pod1","pciID":"0000:19:00.0"}],)"
            R"("ips":[{"address":"10.200.1.1/30","gateway":"10.200.1.2","interface":0}],)"
            R"("routes":[{"dst":"10.200.0.0/16","gw":"10.200.1.2"}]})");
}

TEST(RenderAddResultTest, Version110LeavesOutWhatTheDaemonDidNotSay) {
  v1::Attachment attachment = Sample();
  attachment.clear_pci_address();
  attachment.clear_mtu();
  attachment.clear_mac();
  attachment.mutable_ips(0)->clear_gateway();
  attachment.mutable_routes(0)->clear_gateway();
  EXPECT_EQ(
      Render("1.1.0", attachment),
      R"({"cniVersion":"1.1.0","interfaces":[{"name":"net1","sandbox":"/var/run/netns/pod1"}],)"
      R"("ips":[{"address":"10.200.1.1/30","interface":0}],"routes":[{"dst":"10.200.0.0/16"}]})");
}

TEST(RenderAddResultTest, L2HasNoIpsOrRoutes) {
  v1::Attachment attachment = Sample();
  attachment.clear_ips();
  attachment.clear_routes();
  EXPECT_EQ(Render("1.0.0", attachment),
            R"({"cniVersion":"1.0.0","interfaces":[{"name":"net1","mac":"b0:fd:0b:00:00:00",)"
            R"("sandbox":"/var/run/netns/pod1"}]})");
}

TEST(RenderAddResultTest, Ipv6AddressesAreVersion6In040) {
  v1::Attachment attachment = Sample();
  attachment.mutable_ips(0)->set_address("fd00::1/64");
  attachment.mutable_ips(0)->set_gateway("fd00::2");
  const Json result = RenderAddResult("0.4.0", attachment, "net1", kNetns, std::nullopt);
  EXPECT_EQ(result["ips"][0]["version"], "6");
}

TEST(RenderAddResultTest, ChainingAppendsAfterPrevResultAndKeepsItsOtherKeys) {
  const Json prev = Json::parse(R"({
      "cniVersion": "1.0.0",
      "interfaces": [{"name": "eth0", "sandbox": "/var/run/netns/pod1"}, {"name": "veth1"}],
      "ips": [{"address": "10.1.0.5/24", "interface": 0}],
      "routes": [{"dst": "0.0.0.0/0", "gw": "10.1.0.1"}],
      "dns": {"nameservers": ["10.1.0.1"]}})");
  EXPECT_EQ(
      Render("1.0.0", Sample(), prev),
      R"({"cniVersion":"1.0.0",)"
      R"("interfaces":[{"name":"eth0","sandbox":"/var/run/netns/pod1"},{"name":"veth1"},)"
      R"({"name":"net1","mac":"b0:fd:0b:00:00:00","sandbox":"/var/run/netns/pod1"}],)"
      R"("ips":[{"address":"10.1.0.5/24","interface":0},)"
      R"({"address":"10.200.1.1/30","gateway":"10.200.1.2","interface":2}],)"
      R"("routes":[{"dst":"0.0.0.0/0","gw":"10.1.0.1"},{"dst":"10.200.0.0/16","gw":"10.200.1.2"}],)"
      R"("dns":{"nameservers":["10.1.0.1"]}})");
}

TEST(RenderAddResultTest, ChainingOntoAnEmptyPrevResult) {
  const Json result = RenderAddResult("1.1.0", Sample(), "net1", kNetns, Json::object());
  EXPECT_EQ(result["ips"][0]["interface"], 0);
}

TEST(VersionResultTest, ListsTheThreeVersions) {
  EXPECT_EQ(VersionResult("1.0.0").dump(),
            R"({"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0","1.1.0"]})");
}

class CheckPrevResultTest : public ::testing::TestWithParam<const char*> {
 protected:
  // What ADD printed in this test's version, chained after another plugin.
  Json AddResult() const {
    const Json prev = Json::parse(R"({"interfaces": [{"name": "eth0", "sandbox": "/x"}],
                                      "ips": [{"address": "10.1.0.5/24", "interface": 0}]})");
    return RenderAddResult(GetParam(), Sample(), "net1", kNetns, prev);
  }
};

TEST_P(CheckPrevResultTest, TheAddResultChecksOut) {
  EXPECT_OK(CheckPrevResult(Sample(), "net1", kNetns, AddResult()));
}

TEST_P(CheckPrevResultTest, InterfaceMissing) {
  const absl::Status status = CheckPrevResult(Sample(), "net2", kNetns, AddResult());
  EXPECT_EQ(CniCodeOf(status), CniCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("prevResult: no interface net2 in sandbox"));
}

TEST_P(CheckPrevResultTest, InterfaceInAnotherSandbox) {
  EXPECT_THAT(CheckPrevResult(Sample(), "net1", "/var/run/netns/other", AddResult()).message(),
              HasSubstr("no interface net1 in sandbox /var/run/netns/other"));
}

TEST_P(CheckPrevResultTest, MacDiffers) {
  v1::Attachment now = Sample();
  now.set_mac("b0:fd:0b:00:00:01");
  EXPECT_THAT(CheckPrevResult(now, "net1", kNetns, AddResult()).message(),
              HasSubstr("interface net1: MAC is b0:fd:0b:00:00:01, prevResult says "
                        "b0:fd:0b:00:00:00"));
}

TEST_P(CheckPrevResultTest, AddressMissingFromPrevResult) {
  v1::Attachment now = Sample();
  now.add_ips()->set_address("10.200.9.1/30");
  EXPECT_THAT(CheckPrevResult(now, "net1", kNetns, AddResult()).message(),
              HasSubstr("address 10.200.9.1/30 is missing from prevResult"));
}

TEST_P(CheckPrevResultTest, PrevResultListsAnAddressTheDaemonDoesNotHave) {
  v1::Attachment now = Sample();
  now.clear_ips();
  EXPECT_THAT(CheckPrevResult(now, "net1", kNetns, AddResult()).message(),
              HasSubstr("prevResult lists address 10.200.1.1/30, rocenetd has not configured it"));
}

TEST_P(CheckPrevResultTest, RouteMissing) {
  v1::Attachment now = Sample();
  v1::RouteConfig* route = now.add_routes();
  route->set_destination("10.201.0.0/16");
  route->set_gateway("10.200.1.2");
  EXPECT_THAT(CheckPrevResult(now, "net1", kNetns, AddResult()).message(),
              HasSubstr("route 10.201.0.0/16 via 10.200.1.2 is missing from prevResult"));
}

INSTANTIATE_TEST_SUITE_P(Versions, CheckPrevResultTest,
                         ::testing::Values("0.4.0", "1.0.0", "1.1.0"));

TEST(CheckPrevResultMtuTest, MtuDiffersIn110) {
  const Json added = RenderAddResult("1.1.0", Sample(), "net1", kNetns, std::nullopt);
  v1::Attachment now = Sample();
  now.set_mtu(9000);
  EXPECT_THAT(CheckPrevResult(now, "net1", kNetns, added).message(),
              HasSubstr("interface net1: MTU is 9000, prevResult says 8000"));
}

}  // namespace
}  // namespace rocenet::cni
