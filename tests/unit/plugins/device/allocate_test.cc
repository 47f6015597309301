#include "plugins/device/allocate.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "plugins/device/devinfo.h"

namespace rocenet::device {
namespace {

using ::testing::HasSubstr;

PortInfo Port(const std::string& id, const std::string& name, const std::string& pci,
              const std::string& mac, const std::string& local, const std::string& gateway_mac) {
  PortInfo p;
  p.id = id;
  p.name = name;
  p.pci_address = pci;
  p.mac = mac;
  p.local = local;
  p.gateway_mac = gateway_mac;
  return p;
}

PortMap Ports() {
  PortMap ports;
  ports["gaudi-0000:19:00.0-p1"] = Port("gaudi-0000:19:00.0-p1", "so2", "0000:19:00.0",
                                        "02:00:00:00:00:02", "10.200.2.1/30", "02:aa:00:00:00:02");
  ports["gaudi-0000:19:00.0-p0"] = Port("gaudi-0000:19:00.0-p0", "so1", "0000:19:00.0",
                                        "02:00:00:00:00:01", "10.200.1.1/30", "02:aa:00:00:00:01");
  ports["eth7"] = Port("eth7", "eth7", "", "", "", "");
  return ports;
}

AllocateOptions Options(bool gaudinet) {
  AllocateOptions o;
  o.resource_name = "rocenet.io/scale-out-port";
  o.devinfo_dir = "/run/devinfo/dp";
  if (gaudinet) o.gaudinet_dir = "/run/rocenet/gaudinet";
  return o;
}

TEST(DevInfo, FileNameHasNoSlashes) {
  EXPECT_EQ(DevInfoFileName("rocenet.io/scale-out-port", "gaudi-0000:19:00.0-p0"),
            "rocenet.io-scale-out-port-gaudi-0000:19:00.0-p0-device.json");
}

TEST(DevInfo, PciTypeWithAddressWhenKnown) {
  nlohmann::json j = nlohmann::json::parse(DevInfoJson(Ports()["gaudi-0000:19:00.0-p0"]));
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"({"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:19:00.0"}})"));
  nlohmann::json unknown = nlohmann::json::parse(DevInfoJson(Ports()["eth7"]));
  EXPECT_EQ(unknown["type"], "pci");
  EXPECT_FALSE(unknown["pci"].contains("pci-address"));
}

TEST(Allocate, EnvAndOneDevInfoFilePerPort) {
  auto a = BuildContainerAllocation({"gaudi-0000:19:00.0-p1", "gaudi-0000:19:00.0-p0"}, Ports(),
                                    Options(false));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->response.envs().at(kEnvPortIds), "gaudi-0000:19:00.0-p1,gaudi-0000:19:00.0-p0");
  EXPECT_EQ(a->response.envs().at(kEnvPortInterfaces), "so2,so1");
  EXPECT_FALSE(a->response.envs().contains(kEnvGaudinet));
  EXPECT_EQ(a->response.mounts_size(), 0);
  ASSERT_EQ(a->files.size(), 2u);
  EXPECT_EQ(a->files[0].path,
            "/run/devinfo/dp/rocenet.io-scale-out-port-gaudi-0000:19:00.0-p1-device.json");
  EXPECT_EQ(nlohmann::json::parse(a->files[0].content)["pci"]["pci-address"], "0000:19:00.0");
}

TEST(Allocate, GaudinetListsExactlyTheAllocatedPortsSortedByInterface) {
  auto a = BuildContainerAllocation({"gaudi-0000:19:00.0-p1", "gaudi-0000:19:00.0-p0"}, Ports(),
                                    Options(true));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->files.size(), 3u);
  const FileToWrite& g = a->files[2];
  EXPECT_THAT(g.path, HasSubstr("/run/rocenet/gaudinet/gaudinet-"));
  nlohmann::json want = nlohmann::json::parse(R"({"NIC_NET_CONFIG":[
    {"NIC_MAC":"02:00:00:00:00:01","NIC_IP":"10.200.1.1","SUBNET_MASK":"255.255.255.252",
     "GATEWAY_MAC":"02:aa:00:00:00:01"},
    {"NIC_MAC":"02:00:00:00:00:02","NIC_IP":"10.200.2.1","SUBNET_MASK":"255.255.255.252",
     "GATEWAY_MAC":"02:aa:00:00:00:02"}]})");
  EXPECT_EQ(nlohmann::json::parse(g.content), want);
  ASSERT_EQ(a->response.mounts_size(), 1);
  EXPECT_EQ(a->response.mounts(0).host_path(), g.path);
  EXPECT_EQ(a->response.mounts(0).container_path(), kDefaultGaudinetContainerPath);
  EXPECT_TRUE(a->response.mounts(0).read_only());
  EXPECT_EQ(a->response.envs().at(kEnvGaudinet), kDefaultGaudinetContainerPath);
}

TEST(Allocate, SameSetSameGaudinetFileWhateverTheOrder) {
  auto a = BuildContainerAllocation({"gaudi-0000:19:00.0-p1", "gaudi-0000:19:00.0-p0"}, Ports(),
                                    Options(true));
  auto b = BuildContainerAllocation({"gaudi-0000:19:00.0-p0", "gaudi-0000:19:00.0-p1"}, Ports(),
                                    Options(true));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->files[2].path, b->files[2].path);
}

TEST(Allocate, UnknownIdsAreInvalidArgumentNamingThem) {
  auto a = BuildContainerAllocation({"eth7", "nope", "gone"}, Ports(), Options(false));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("nope, gone"));
  EXPECT_THAT(std::string(a.status().message()), ::testing::Not(HasSubstr("eth7")));
}

TEST(Allocate, EmptyRequestIsInvalid) {
  EXPECT_EQ(BuildContainerAllocation({}, Ports(), Options(false)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rocenet::device
