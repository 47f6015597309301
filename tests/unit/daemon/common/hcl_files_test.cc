// SPDX-License-Identifier: Apache-2.0
// HCL's files from a set of ports: what each file lists, and which files a
// directory holds. The device plugin's tests (allocate_test.cc) hold the
// same files to HCL's parsers through an allocation.
#include "daemon/common/hcl_files.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace rocenet {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

HclPort Gaudi(const std::string& name, int index, const std::string& local) {
  return HclPort{.id = "0000:33:00.0-p" + std::to_string(index),
                 .name = name,
                 .pci_address = "0000:33:00.0",
                 .mac = "B0:FD:0B:00:00:0" + std::to_string(index),
                 .port_index = index,
                 .gaudi = true,
                 .local = local,
                 .gateway_mac = local.empty() ? "" : "02:00:00:00:00:aa",
                 .l2 = false};
}

TEST(HclFilesTest, GaudinetListsAddressedPortsByNameWithTheirMask) {
  const std::vector<HclPort> given = {Gaudi("so9", 9, "10.200.9.1/30"), Gaudi("so8", 8, ""),
                                      Gaudi("so1", 1, "10.200.1.1/24")};
  const std::optional<std::string> json = GaudinetJson(given);
  ASSERT_TRUE(json.has_value());
  const nlohmann::json want = {{"NIC_NET_CONFIG",
                                {{{"NIC_MAC", "b0:fd:0b:00:00:01"},
                                  {"NIC_IP", "10.200.1.1"},
                                  {"SUBNET_MASK", "255.255.255.0"},
                                  {"GATEWAY_MAC", "02:00:00:00:00:aa"}},
                                 {{"NIC_MAC", "b0:fd:0b:00:00:09"},
                                  {"NIC_IP", "10.200.9.1"},
                                  {"SUBNET_MASK", "255.255.255.252"},
                                  {"GATEWAY_MAC", "02:00:00:00:00:aa"}}}}};
  EXPECT_EQ(nlohmann::json::parse(*json), want);
  // Habana's key order, which a person comparing with the host's file sees.
  EXPECT_LT(json->find("NIC_MAC"), json->find("NIC_IP"));
}

TEST(HclFilesTest, NoGaudinetInL2OrWithoutAnAddress) {
  HclPort l2 = Gaudi("so1", 1, "10.200.1.1/30");
  l2.l2 = true;
  EXPECT_EQ(GaudinetJson({l2}), std::nullopt);
  EXPECT_EQ(GaudinetJson({Gaudi("so1", 1, "")}), std::nullopt);
  HclPort no_gateway = Gaudi("so1", 1, "10.200.1.1/30");
  no_gateway.gateway_mac.clear();
  EXPECT_EQ(GaudinetJson({no_gateway}), std::nullopt);
}

TEST(HclFilesTest, MacInfoHasEveryPortOfTheGivenFunctionsByNicIndex) {
  const HclPort so1 = Gaudi("so1", 1, "");
  HclPort other_function = Gaudi("so2", 2, "");
  other_function.pci_address = "0000:4d:00.0";
  const std::optional<std::string> json =
      MacAddrInfoJson({so1}, {so1, Gaudi("so3", 3, ""), other_function});
  ASSERT_TRUE(json.has_value());
  const nlohmann::json info = nlohmann::json::parse(*json)["MAC_ADDR_INFO"];
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0]["PCI_ID"], "0000:33:00.0");
  std::vector<std::string> macs(kGaudiNicCount, kInternalNicMac);
  macs[1] = "b0:fd:0b:00:00:01";
  macs[3] = "b0:fd:0b:00:00:03";
  EXPECT_EQ(info[0]["MAC_ADDR_LIST"], nlohmann::json(macs));

  HclPort nic = so1;
  nic.gaudi = false;
  EXPECT_EQ(MacAddrInfoJson({nic}, {nic}), std::nullopt);
}

TEST(HclFilesTest, ADirectoryHoldsOnlyTheFilesWithContent) {
  const HclPort addressed = Gaudi("so1", 1, "10.200.1.1/30");
  EXPECT_THAT(
      HclFiles({addressed}, {addressed}),
      ElementsAre(Field(&HclFile::name, kMacInfoFile), Field(&HclFile::name, kGaudinetFile)));
  const HclPort waiting = Gaudi("so1", 1, "");
  EXPECT_THAT(HclFiles({waiting}, {waiting}), ElementsAre(Field(&HclFile::name, kMacInfoFile)));
  HclPort nic = waiting;
  nic.gaudi = false;
  EXPECT_TRUE(HclFiles({nic}, {nic}).empty());
}

}  // namespace
}  // namespace rocenet
