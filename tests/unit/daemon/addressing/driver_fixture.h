// SPDX-License-Identifier: Apache-2.0
// The fixture of the addressing driver tests: two ports (so0, so1; so2 on
// request) over a fake kernel and a fake file system, LLDP heard through a
// real neighbor table, and a driver that can be restarted over them.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/addressing/driver.h"
#include "daemon/health/signals.h"
#include "daemon/lldp/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::MakeLink;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kStatePath[] = "/var/lib/rocenet/addressing.json";
constexpr int kSo0 = 2;
constexpr int kSo1 = 3;
constexpr int kSo2 = 4;
constexpr char kSo0Id[] = "0000:19:00.0-p8";
constexpr char kSo1Id[] = "0000:19:00.0-p22";
constexpr char kSo2Id[] = "0000:19:00.0-p23";
const MacAddress kSwitchMac({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc7});
const os::Moment kT0 = {absl::FromUnixSeconds(1'800'000'000),
                        os::BootTime::SinceBoot(absl::Hours(3))};

os::RouteInfo FabricRoute(const char* gateway, int ifindex = kSo0) {
  return os::RouteInfo{P("10.200.0.0/16"), A(gateway),     ifindex,
                       /*protocol=*/158,   os::kMainTable, 1000 + static_cast<uint32_t>(ifindex)};
}

class AddressingDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    netlink_.SetLink(MakeLink(kSo0, "so0"));
    netlink_.SetLink(MakeLink(kSo1, "so1"));
    fs_.AddDirectory("/var/lib/rocenet");
    Restart();
  }

  // A new daemon: the same files and kernel, nothing else.
  void Restart(addressing::Mode mode = addressing::Mode::kL3) {
    driver_.reset();
    store_ = std::make_unique<addressing::AppliedStore>(&fs_, kStatePath);
    ASSERT_OK(store_->Load());
    addressing::PlannerConfig config;
    config.mode = mode;
    driver_ = std::make_unique<AddressingDriver>(&netlink_, store_.get(), config);
  }

  // The ports as the inventory would list them from the kernel right now.
  std::vector<inventory::Port> Ports() const {
    std::vector<inventory::Port> out;
    for (const auto& [id, ifindex] : port_ids_) {
      inventory::Port port;
      port.id = id;
      port.present = netlink_.link(ifindex) != nullptr;
      if (port.present) {
        port.link = *netlink_.link(ifindex);
        port.name = port.link.name;
      }
      out.push_back(port);
    }
    return out;
  }

  // The switch port behind `port_id` says `description`.
  void Hear(const std::string& port_id, const std::string& description, uint16_t ttl = 120) {
    lldp::Lldpdu pdu;
    pdu.chassis_id = {lldp::ChassisIdSubtype::kLocal, "leaf-01"};
    pdu.port_id = {lldp::PortIdSubtype::kInterfaceName, "Ethernet1/" + port_id};
    pdu.ttl_seconds = ttl;
    pdu.port_descriptions = {description};
    absl::StatusOr<std::string> frame = lldp::Encode(pdu, kSwitchMac);
    ASSERT_OK(frame);
    table_.Observe(port_id, kSwitchMac, pdu, *frame, kT0);
  }

  bool Run() { return driver_->Run(Ports(), table_); }

  bool HasAddress(const char* prefix, int ifindex = kSo0) const {
    const os::AddressInfo a{ifindex, P(prefix)};
    return std::find(netlink_.addresses().begin(), netlink_.addresses().end(), a) !=
           netlink_.addresses().end();
  }

  const PortAddressing& So0() const { return driver_->ports().at(0); }
  // The health inputs of a port as the node assembles them from the driver.
  health::PortSignals Signals(const std::string& port_id = kSo0Id) const {
    health::SignalSources sources;
    sources.addressing = &driver_->ports();
    sources.l3 = driver_->mode() == addressing::Mode::kL3;
    sources.neighbors = &table_;
    return health::AssembleSignals(Ports(), sources).at(port_id);
  }

  // A third port, so2, for tests of the node as a whole.
  void AddSo2() {
    netlink_.SetLink(MakeLink(kSo2, "so2"));
    port_ids_.emplace_back(kSo2Id, kSo2);
  }

  std::vector<std::pair<std::string, int>> port_ids_ = {{kSo0Id, kSo0}, {kSo1Id, kSo1}};
  FakeNetlink netlink_;
  FakeFileSystem fs_;
  lldp::NeighborTable table_;
  std::unique_ptr<addressing::AppliedStore> store_;
  std::unique_ptr<AddressingDriver> driver_;
};

}  // namespace
}  // namespace rocenet::addressing
