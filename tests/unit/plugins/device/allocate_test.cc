// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/allocate.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "plugins/device/devinfo.h"
#include "tests/unit/plugins/device/hcl_rules.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::device {
namespace {

using ::testing::HasSubstr;

PortInfo Port(const std::string& id, const std::string& name, const std::string& pci,
              const std::string& mac, const std::string& local, const std::string& gateway_mac,
              int index = -1) {
  PortInfo p;
  p.id = id;
  p.name = name;
  p.pci_address = pci;
  p.mac = mac;
  p.local = local;
  p.gateway_mac = gateway_mac;
  p.port_index = index;
  p.gaudi = index >= 0;
  return p;
}

// Two Gaudi 2 functions with their scale-out NICs 8, 22 and 23 (one of the
// second function's is refused by its switch: no address), and a virtual
// port.
PortMap Ports() {
  PortMap ports;
  for (auto p :
       {Port("0000:19:00.0-p22", "so2", "0000:19:00.0", "02:00:00:00:00:02", "10.200.2.1/30",
             "02:AA:00:00:00:02", 22),
        Port("0000:19:00.0-p8", "so1", "0000:19:00.0", "02:00:00:00:00:01", "10.200.1.1/30",
             "02:aa:00:00:00:01", 8),
        Port("0000:19:00.0-p23", "so3", "0000:19:00.0", "02:00:00:00:00:03", "10.200.3.1/30",
             "02:aa:00:00:00:03", 23),
        Port("0000:1a:00.0-p8", "so4", "0000:1a:00.0", "02:00:00:00:00:04", "10.200.4.1/30",
             "02:aa:00:00:00:04", 8),
        Port("0000:1a:00.0-p22", "so5", "0000:1a:00.0", "02:00:00:00:00:05", "", "", 22),
        Port("if-eth7", "eth7", "", "02:00:00:00:00:07", "10.200.7.1/30", "02:aa:00:00:00:07")}) {
    ports[p.id] = p;
  }
  return ports;
}

AllocateOptions Options(bool hcl) {
  AllocateOptions o;
  o.resource_name = "rocenet.io/scale-out-port";
  o.devinfo_dir = "/run/devinfo/dp";
  if (hcl) o.hcl_dir = "/run/rocenet/hcl";
  return o;
}

const FileToWrite* Find(const ContainerAllocation& a, const std::string& suffix) {
  for (const FileToWrite& f : a.files) {
    if (absl::EndsWith(f.path, suffix)) return &f;
  }
  return nullptr;
}

TEST(DevInfo, FileNameHasNoSlashes) {
  EXPECT_EQ(DevInfoFileName("rocenet.io/scale-out-port", "0000:19:00.0-p8"),
            "rocenet.io-scale-out-port-0000:19:00.0-p8-device.json");
}

TEST(DevInfo, PciTypeWithItsAddress) {
  nlohmann::json j = nlohmann::json::parse(DevInfoJson(Ports()["0000:19:00.0-p8"]));
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"({"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:19:00.0"}})"));
}

TEST(Allocate, EnvAndOneDevInfoFilePerPciPort) {
  auto a = BuildContainerAllocation({"0000:19:00.0-p22", "0000:19:00.0-p8", "if-eth7"}, Ports(),
                                    Options(false));
  ASSERT_OK(a);
  EXPECT_EQ(a->response.envs().at(kEnvPortIds), "0000:19:00.0-p22,0000:19:00.0-p8,if-eth7");
  EXPECT_EQ(a->response.envs().at(kEnvPortInterfaces), "so2,so1,eth7");
  EXPECT_FALSE(a->response.envs().contains(kEnvGaudinet));
  EXPECT_EQ(a->response.mounts_size(), 0);
  // The virtual port has no PCI address, which type "pci" requires: no file.
  ASSERT_EQ(a->files.size(), 2u);
  EXPECT_EQ(a->files[0].path,
            "/run/devinfo/dp/rocenet.io-scale-out-port-0000:19:00.0-p22-device.json");
  EXPECT_EQ(nlohmann::json::parse(a->files[0].content)["pci"]["pci-address"], "0000:19:00.0");
}

TEST(Allocate, HclDirectoryMountedWithBothFilesThatHclAccepts) {
  auto a =
      BuildContainerAllocation({"0000:19:00.0-p22", "0000:19:00.0-p8"}, Ports(), Options(true));
  ASSERT_OK(a);
  ASSERT_EQ(a->response.mounts_size(), 1);
  EXPECT_EQ(a->response.mounts(0).host_path(), a->hcl_dir);
  EXPECT_THAT(a->hcl_dir, ::testing::StartsWith("/run/rocenet/hcl/"));
  EXPECT_EQ(a->response.mounts(0).container_path(), kDefaultHclContainerDir);
  EXPECT_TRUE(a->response.mounts(0).read_only());
  EXPECT_EQ(a->response.envs().at(kEnvGaudinet), "/etc/habanalabs/rocenet/gaudinet.json");
  EXPECT_EQ(a->response.envs().at(kEnvMacInfo), "/etc/habanalabs/rocenet/macAddrInfo.json");
  const FileToWrite* gaudinet = Find(*a, "/gaudinet.json");
  const FileToWrite* macs = Find(*a, "/macAddrInfo.json");
  ASSERT_NE(gaudinet, nullptr);
  ASSERT_NE(macs, nullptr);
  EXPECT_EQ(gaudinet->path, a->hcl_dir + "/gaudinet.json");
  EXPECT_EQ(testing::HclRefusesGaudinet(gaudinet->content), "");
  EXPECT_EQ(testing::HclRefusesMacInfo(macs->content), "");
  nlohmann::json want = nlohmann::json::parse(R"({"NIC_NET_CONFIG":[
    {"NIC_MAC":"02:00:00:00:00:01","NIC_IP":"10.200.1.1","SUBNET_MASK":"255.255.255.252",
     "GATEWAY_MAC":"02:aa:00:00:00:01"},
    {"NIC_MAC":"02:00:00:00:00:02","NIC_IP":"10.200.2.1","SUBNET_MASK":"255.255.255.252",
     "GATEWAY_MAC":"02:aa:00:00:00:02"}]})");
  EXPECT_EQ(nlohmann::json::parse(gaudinet->content), want);
}

TEST(Allocate, MacInfoHasEveryScaleOutPortOfTheFunctionByNicIndex) {
  auto a = BuildContainerAllocation({"0000:19:00.0-p8"}, Ports(), Options(true));
  ASSERT_OK(a);
  const FileToWrite* macs = Find(*a, "/macAddrInfo.json");
  ASSERT_NE(macs, nullptr);
  nlohmann::json info = nlohmann::json::parse(macs->content)["MAC_ADDR_INFO"];
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0]["PCI_ID"], "0000:19:00.0");
  std::vector<std::string> list = info[0]["MAC_ADDR_LIST"];
  ASSERT_EQ(list.size(), 24u);
  for (int i = 0; i < 24; ++i) {
    SCOPED_TRACE(i);
    const char* want = i == 8    ? "02:00:00:00:00:01"
                       : i == 22 ? "02:00:00:00:00:02"
                       : i == 23 ? "02:00:00:00:00:03"
                                 : "ff:ff:ff:ff:ff:ff";
    EXPECT_EQ(list[i], want);
  }
}

TEST(Allocate, APortWithoutAnAddressIsLeftOutOfGaudinet) {
  // so5 has no address (its Port Description is refused): an entry with an
  // empty NIC_IP would make HCL refuse the whole file.
  auto a =
      BuildContainerAllocation({"0000:1a:00.0-p8", "0000:1a:00.0-p22"}, Ports(), Options(true));
  ASSERT_OK(a);
  const FileToWrite* gaudinet = Find(*a, "/gaudinet.json");
  ASSERT_NE(gaudinet, nullptr);
  EXPECT_EQ(testing::HclRefusesGaudinet(gaudinet->content), "");
  nlohmann::json entries = nlohmann::json::parse(gaudinet->content)["NIC_NET_CONFIG"];
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["NIC_MAC"], "02:00:00:00:00:04");
  // Without any address there is no gaudinet.json and no variable naming one.
  auto none = BuildContainerAllocation({"0000:1a:00.0-p22"}, Ports(), Options(true));
  ASSERT_OK(none);
  EXPECT_EQ(Find(*none, "/gaudinet.json"), nullptr);
  EXPECT_FALSE(none->response.envs().contains(kEnvGaudinet));
  EXPECT_TRUE(none->response.envs().contains(kEnvMacInfo));
}

TEST(Allocate, NoGaudinetInL2) {
  PortMap ports = Ports();
  for (auto& [id, port] : ports) port.l2 = true;
  auto a = BuildContainerAllocation({"0000:19:00.0-p22", "0000:19:00.0-p8"}, ports, Options(true));
  ASSERT_OK(a);
  EXPECT_EQ(Find(*a, "/gaudinet.json"), nullptr);
  EXPECT_FALSE(a->response.envs().contains(kEnvGaudinet));
  EXPECT_NE(Find(*a, "/macAddrInfo.json"), nullptr);
}

TEST(Allocate, NoHclDirectoryForPortsThatAreNotGaudi) {
  auto a = BuildContainerAllocation({"if-eth7"}, Ports(), Options(true));
  ASSERT_OK(a);
  EXPECT_EQ(a->response.mounts_size(), 0);
  EXPECT_TRUE(a->hcl_dir.empty());
  EXPECT_TRUE(a->files.empty());
}

TEST(Allocate, SameSetSameDirectoryWhateverTheOrder) {
  auto a =
      BuildContainerAllocation({"0000:19:00.0-p22", "0000:19:00.0-p8"}, Ports(), Options(true));
  auto b =
      BuildContainerAllocation({"0000:19:00.0-p8", "0000:19:00.0-p22"}, Ports(), Options(true));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->hcl_dir, b->hcl_dir);
  EXPECT_EQ(a->ids, b->ids);
}

PortMap WithRdma() {
  PortMap ports = Ports();
  ports["if-eth7"].rdma_device = "mlx5_0";
  ports["if-eth7"].uverbs = "uverbs3";
  ports["if-eth7"].gid_index = 3;
  ports["0000:19:00.0-p8"].rdma_device = "hbl_0";
  ports["0000:19:00.0-p8"].uverbs = "uverbs0";
  ports["0000:19:00.0-p8"].gid_index = 1;
  return ports;
}

std::vector<std::string> DevicePaths(const ContainerAllocation& a) {
  std::vector<std::string> out;
  for (const auto& d : a.response.devices()) {
    EXPECT_EQ(d.container_path(), d.host_path());
    EXPECT_EQ(d.permissions(), "rw");
    out.push_back(d.host_path());
  }
  return out;
}

TEST(Allocate, RdmaPortsGetTheirVerbsNodesAndGidIndex) {
  auto a = BuildContainerAllocation({"if-eth7", "0000:19:00.0-p22", "0000:19:00.0-p8"}, WithRdma(),
                                    Options(false));
  ASSERT_OK(a);
  EXPECT_EQ(a->response.envs().at(kEnvRdmaDevices), "mlx5_0,,hbl_0");
  EXPECT_EQ(a->response.envs().at(kEnvGidIndex), "3,,1");
  // The Gaudi port's node is Habana's runtime's to mount, by default.
  EXPECT_THAT(DevicePaths(*a),
              ::testing::ElementsAre("/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"));
}

TEST(Allocate, NoRdmaCmNodeWhereTheNodeHasNone) {
  // Without rdma_ucm loaded there is no /dev/infiniband/rdma_cm, and a
  // device node that does not exist keeps the container from starting.
  AllocateOptions options = Options(false);
  options.rdma_cm = false;
  auto a = BuildContainerAllocation({"if-eth7"}, WithRdma(), options);
  ASSERT_OK(a);
  EXPECT_THAT(DevicePaths(*a), ::testing::ElementsAre("/dev/infiniband/uverbs3"));
  EXPECT_EQ(a->response.envs().at(kEnvRdmaDevices), "mlx5_0");
}

TEST(Allocate, RdmaDeviceSpecsAllAndNone) {
  AllocateOptions all = Options(false);
  all.rdma_device_specs = RdmaDeviceSpecs::kAll;
  auto a = BuildContainerAllocation({"if-eth7", "0000:19:00.0-p8"}, WithRdma(), all);
  ASSERT_OK(a);
  EXPECT_THAT(DevicePaths(*a),
              ::testing::ElementsAre("/dev/infiniband/uverbs3", "/dev/infiniband/uverbs0",
                                     "/dev/infiniband/rdma_cm"));
  AllocateOptions none = Options(false);
  none.rdma_device_specs = RdmaDeviceSpecs::kNone;
  auto b = BuildContainerAllocation({"if-eth7"}, WithRdma(), none);
  ASSERT_OK(b);
  EXPECT_EQ(b->response.devices_size(), 0);
  EXPECT_EQ(b->response.envs().at(kEnvGidIndex), "3");
}

TEST(Allocate, PortsOfOneRdmaDeviceShareItsNode) {
  PortMap ports = WithRdma();
  ports["0000:19:00.0-p22"].rdma_device = "hbl_0";
  ports["0000:19:00.0-p22"].uverbs = "uverbs0";
  AllocateOptions all = Options(false);
  all.rdma_device_specs = RdmaDeviceSpecs::kAll;
  auto a = BuildContainerAllocation({"0000:19:00.0-p22", "0000:19:00.0-p8"}, ports, all);
  ASSERT_OK(a);
  EXPECT_THAT(DevicePaths(*a),
              ::testing::ElementsAre("/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(a->response.envs().at(kEnvRdmaDevices), "hbl_0,hbl_0");
}

TEST(Allocate, NoRdmaNoRdmaVariables) {
  auto a = BuildContainerAllocation({"0000:19:00.0-p22"}, WithRdma(), Options(false));
  ASSERT_OK(a);
  EXPECT_FALSE(a->response.envs().contains(kEnvRdmaDevices));
  EXPECT_FALSE(a->response.envs().contains(kEnvGidIndex));
  EXPECT_EQ(a->response.devices_size(), 0);
}

TEST(Allocate, UnknownIdsAreInvalidArgumentNamingThem) {
  auto a = BuildContainerAllocation({"if-eth7", "nope", "gone"}, Ports(), Options(false));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("nope, gone"));
  EXPECT_THAT(std::string(a.status().message()), ::testing::Not(HasSubstr("if-eth7")));
}

TEST(Allocate, EmptyRequestIsInvalid) {
  EXPECT_EQ(BuildContainerAllocation({}, Ports(), Options(false)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rocenet::device
