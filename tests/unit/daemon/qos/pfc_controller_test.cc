// SPDX-License-Identifier: Apache-2.0
// PfcController over FakeDcb (the hbl_en rules): what rocenet does to a
// port's PFC for each qos.pfc, after a reset, and on ports that cannot.
#include "daemon/qos/pfc_controller.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_dcb.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::qos {
namespace {

using ::rocenet::testing::DcbDriver;
using ::rocenet::testing::FakeDcb;
using ::testing::HasSubstr;

inventory::Port GaudiPort(const std::string& name, int ifindex) {
  inventory::Port port;
  port.id = "0000:19:00.0-p" + std::to_string(ifindex);
  port.name = name;
  port.present = true;
  port.discovery = inventory::Discovery::kGaudiSysfs;
  port.link = ::rocenet::testing::MakeLink(ifindex, name);
  return port;
}

inventory::Port VethPort(const std::string& name, int ifindex) {
  inventory::Port port = GaudiPort(name, ifindex);
  port.id = "if-" + name;
  port.discovery = inventory::Discovery::kInterfaceName;
  return port;
}

PfcRequest Request(const char* text) { return *ParsePfcRequest(text); }

TEST(PfcControllerTest, KeepReadsButNeverSets) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, PfcRequest{});
  EXPECT_TRUE(pfc.Sync({GaudiPort("so0", 2)}));
  EXPECT_EQ(dcb.set_calls(), 0);
  const PortPfc& port = pfc.ports().at("0000:19:00.0-p2");
  EXPECT_TRUE(port.supported);
  EXPECT_EQ(port.settings.enabled, 0x0f);
  EXPECT_EQ(port.wanted, std::nullopt);
  EXPECT_TRUE(port.problem.empty());
  EXPECT_FALSE(pfc.Sync({GaudiPort("so0", 2)})) << "nothing changed";
}

TEST(PfcControllerTest, SetsWhatIsAskedOnceAndAgainAfterAReset) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, Request("none"));
  const std::vector<inventory::Port> ports = {GaudiPort("so0", 2)};
  EXPECT_TRUE(pfc.Sync(ports));
  EXPECT_EQ(dcb.device("so0")->pfc.enabled, 0);
  EXPECT_EQ(pfc.ports().at(ports[0].id).settings.enabled, 0);
  EXPECT_FALSE(pfc.Sync(ports));
  EXPECT_EQ(dcb.set_calls(), 1);
  // The driver reset the port: PFC is on again, and rocenet sets it back.
  dcb.Reset("so0");
  EXPECT_FALSE(pfc.Sync(ports)) << "the port is as asked again when Sync returns";
  EXPECT_EQ(dcb.device("so0")->pfc.enabled, 0);
  EXPECT_EQ(dcb.set_calls(), 2);
  EXPECT_EQ(pfc.changes(), 2u);
}

TEST(PfcControllerTest, ANewRequestTakesEffectOnTheNextSync) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, Request("none"));
  const std::vector<inventory::Port> ports = {GaudiPort("so0", 2)};
  pfc.Sync(ports);
  pfc.SetRequest(Request("all"));
  EXPECT_TRUE(pfc.Sync(ports));
  EXPECT_EQ(dcb.device("so0")->pfc.enabled, 0x0f);
  pfc.SetRequest(PfcRequest{});
  EXPECT_TRUE(pfc.Sync(ports));
  EXPECT_EQ(dcb.device("so0")->pfc.enabled, 0x0f) << "keep leaves it as it is";
}

TEST(PfcControllerTest, CheckNamesThePortThatCannot) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  dcb.AddDevice("veth0", DcbDriver::kNone);
  PfcController pfc(&dcb, PfcRequest{});
  const std::vector<inventory::Port> ports = {VethPort("veth0", 3), GaudiPort("so0", 2)};
  EXPECT_OK(pfc.Check(Request("0-3"), ports));
  EXPECT_OK(pfc.Check(Request("all"), ports));
  absl::Status refused = pfc.Check(Request("3"), ports);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("port so0: a Gaudi port (hbl_en)"));
  EXPECT_EQ(dcb.set_calls(), 0) << "a check changes nothing";
}

TEST(PfcControllerTest, APortWithoutDcbIsReportedOnlyWhenPfcIsAsked) {
  FakeDcb dcb;
  dcb.AddDevice("veth0", DcbDriver::kNone);
  PfcController pfc(&dcb, PfcRequest{});
  std::vector<inventory::Port> ports = {VethPort("veth0", 3)};
  pfc.Sync(ports);
  EXPECT_FALSE(pfc.ports().at("if-veth0").supported);
  EXPECT_TRUE(pfc.ports().at("if-veth0").problem.empty());
  pfc.SetRequest(Request("all"));
  EXPECT_TRUE(pfc.Sync(ports));
  const PortPfc& port = pfc.ports().at("if-veth0");
  EXPECT_EQ(port.problem, "NoDcb");
  EXPECT_THAT(port.problem_message,
              HasSubstr("port veth0: qos.pfc asks for PFC all but the device has no DCB support "
                        "(dcbnl); its PFC is left as it is"));
  EXPECT_EQ(dcb.set_calls(), 0);
}

TEST(PfcControllerTest, AskedOncePerDevice) {
  FakeDcb dcb;
  dcb.AddDevice("veth0", DcbDriver::kNone);
  PfcController pfc(&dcb, Request("all"));
  pfc.Sync({VethPort("veth0", 3)});
  // The same device (ifindex) is not asked again, even if it could now
  // answer; a new device under the same name is.
  dcb.AddDevice("veth0", DcbDriver::kHblEn);
  pfc.Sync({VethPort("veth0", 3)});
  EXPECT_FALSE(pfc.ports().at("if-veth0").supported);
  pfc.Sync({VethPort("veth0", 9)});
  EXPECT_TRUE(pfc.ports().at("if-veth0").supported);
}

TEST(PfcControllerTest, ARefusingDriverIsReportedAndLeftAlone) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, Request("3"));
  pfc.Sync({GaudiPort("so0", 2)});
  const PortPfc& port = pfc.ports().at("0000:19:00.0-p2");
  EXPECT_EQ(port.problem, "Refused");
  EXPECT_THAT(port.problem_message, HasSubstr("not on 3; its PFC is left as it is"));
  EXPECT_EQ(dcb.set_calls(), 0);
  EXPECT_EQ(dcb.device("so0")->pfc.enabled, 0x0f);
}

TEST(PfcControllerTest, AFailedSetIsReportedAndTriedAgain) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, Request("none"));
  const std::vector<inventory::Port> ports = {GaudiPort("so0", 2)};
  dcb.FailNextSet(absl::UnavailableError("device so0: set PFC (dcbnl): Device or resource busy"));
  pfc.Sync(ports);
  EXPECT_EQ(pfc.ports().at(ports[0].id).problem, "SetFailed");
  EXPECT_THAT(pfc.ports().at(ports[0].id).problem_message, HasSubstr("port so0: device so0"));
  EXPECT_TRUE(pfc.Sync(ports));
  EXPECT_TRUE(pfc.ports().at(ports[0].id).problem.empty());
  EXPECT_EQ(dcb.device("so0")->pfc.enabled, 0);
}

TEST(PfcControllerTest, AGenericDriverTakesUpToItsCapability) {
  FakeDcb dcb;
  // A generic driver that takes 2 priorities; "all" for it is refused by
  // the rule, a list of two is set.
  dcb.AddDevice("eth1", DcbDriver::kGeneric, 2);
  PfcController pfc(&dcb, Request("3-4"));
  inventory::Port port = VethPort("eth1", 4);
  pfc.Sync({port});
  EXPECT_EQ(dcb.device("eth1")->pfc.enabled, 0x18);
  EXPECT_TRUE(pfc.ports().at(port.id).problem.empty());
  dcb.RemoveDevice("eth1");
  dcb.AddDevice("eth1", DcbDriver::kGeneric, 1);  // now it takes one
  pfc.Sync({port});
  EXPECT_EQ(pfc.ports().at(port.id).problem, "Refused");
}

TEST(PfcControllerTest, PortsInPodsKeepTheirLastStateAndGoneOnesAreForgotten) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, Request("all"));
  inventory::Port port = GaudiPort("so0", 2);
  pfc.Sync({port});
  dcb.SetCounters("so0", 3, 10, 20);
  port.attached_to = "/proc/42/ns/net";
  dcb.Reset("so0");
  dcb.SetPfc("so0", 0).IgnoreError();  // not rocenet's to see while in the pod
  EXPECT_FALSE(pfc.Sync({port}));
  EXPECT_EQ(pfc.ports().at(port.id).settings.enabled, 0x0f);
  port.present = false;
  port.attached_to.clear();
  EXPECT_TRUE(pfc.Sync({port}));
  EXPECT_TRUE(pfc.ports().empty());
}

TEST(PfcControllerTest, CountersAreReadButAreNoChange) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  PfcController pfc(&dcb, PfcRequest{});
  const std::vector<inventory::Port> ports = {GaudiPort("so0", 2)};
  pfc.Sync(ports);
  dcb.SetCounters("so0", 3, 10, 20);
  EXPECT_FALSE(pfc.Sync(ports));
  EXPECT_EQ(pfc.ports().at(ports[0].id).settings.requests[3], 10u);
  EXPECT_EQ(pfc.ports().at(ports[0].id).settings.indications[3], 20u);
}

}  // namespace
}  // namespace rocenet::qos
