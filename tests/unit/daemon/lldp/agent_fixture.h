// SPDX-License-Identifier: Apache-2.0
// The fixture of the LLDP agent tests: fake packet sockets, a reactor the
// test turns by hand and a fake clock; a switch's frames for ports so0 and
// so1, and helpers that read the agent's table and counters.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/lldp/agent.h"
#include "daemon/lldp/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/encoded_frame.h"
#include "tests/unit/daemon/lldp/frame_builder.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_packet_socket.h"
#include "tests/unit/fakes/fake_reactor.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::lldp {

inline const MacAddress kSo0Mac({0x02, 0, 0, 0, 0, 0x02});
inline const MacAddress kSo1Mac({0x02, 0, 0, 0, 0, 0x03});

inline const AgentPort kSo0{"0000:19:00.0-p8", "so0", 2, kSo0Mac, "", nullptr};
inline const AgentPort kSo1{"0000:19:00.0-p22", "so1", 3, kSo1Mac, "", nullptr};

inline Lldpdu SwitchPdu(const std::string& description = "no-alert 10.200.1.2/30",
                        uint16_t ttl = 120, const std::string& port = "Ethernet1/1") {
  Lldpdu pdu;
  pdu.chassis_id = {ChassisIdSubtype::kMacAddress,
                    std::string(kSwitchMac.bytes().begin(), kSwitchMac.bytes().end())};
  pdu.port_id = {PortIdSubtype::kInterfaceName, port};
  pdu.ttl_seconds = ttl;
  pdu.port_descriptions = {description};
  return pdu;
}

class LldpAgentTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeAgent(); }

  void MakeAgent() {
    agent_ = std::make_unique<LldpAgent>(
        &sockets_, &reactor_, &clock_,
        [this](const std::vector<std::string>& ports) { reports_.push_back(ports); });
  }

  void Sync(const std::vector<AgentPort>& ports) {
    auto failures = agent_->SyncPorts(ports);
    EXPECT_THAT(failures, ::testing::IsEmpty());
  }

  // A frame arrives on `ifindex` and the loop turns until it is handled.
  void Receive(int ifindex, const std::string& frame, const MacAddress& source = kSwitchMac,
               bool outgoing = false) {
    ASSERT_TRUE(sockets_.Inject(ifindex, frame, source, outgoing)) << "no socket on " << ifindex;
    reactor_.RunUntilIdle();
  }

  std::vector<std::string> Descriptions(const std::string& port_id) const {
    std::vector<std::string> out;
    const PortNeighbors* entry = agent_->table().Find(port_id);
    if (entry == nullptr) return out;
    for (const Neighbor& n : entry->neighbors) {
      for (const std::string& d : n.lldpdu.port_descriptions) out.push_back(d);
    }
    return out;
  }

  const PortLldpCounters& Counters(const std::string& port_id) const {
    static const PortLldpCounters kNone;
    auto it = agent_->counters().find(port_id);
    return it == agent_->counters().end() ? kNone : it->second;
  }

  uint64_t Discarded(const std::string& port_id, DecodeError reason) const {
    return Counters(port_id).frames_discarded[static_cast<size_t>(reason)];
  }

  ::rocenet::testing::FakePacketSocketFactory sockets_;
  ::rocenet::testing::FakeReactor reactor_;
  ::rocenet::testing::FakeClock clock_;
  std::vector<std::vector<std::string>> reports_;
  std::unique_ptr<LldpAgent> agent_;
};

}  // namespace rocenet::lldp
