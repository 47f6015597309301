// SPDX-License-Identifier: Apache-2.0
// CountersOf: rocenetd's ports as the counters a diagnostic run compares.
#include <string>
#include <vector>

#include "daemon/diagd/node_ports.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diagd {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(CountersOfTest, EveryFamilyUnderItsNameForTheHostPortsOnly) {
  v1::ListPortsResponse response;
  v1::Port* so0 = response.add_ports();
  so0->set_name("so0");
  so0->set_present(true);
  v1::PortCounters* c = so0->mutable_counters();
  c->set_receive_bytes(1 << 20);  // traffic is the test's own figure, not listed
  c->set_receive_errors(1);
  c->set_receive_drops(2);
  c->set_transmit_errors(3);
  c->set_transmit_drops(4);
  c->set_carrier_down_changes(5);
  (*c->mutable_rdma())["duplicate_request"] = 903;  // mapped below, not twice
  (*c->mutable_transport_events())["duplicate_request"] = 903;
  (*c->mutable_congestion_events())["cnp_sent"] = 6;
  (*c->mutable_lossless_events())["pause_storm_errors"] = 7;
  (*c->mutable_fec_events())["uncorrectable_blocks"] = 8;
  (*c->mutable_phy_events())["link_toggles"] = 9;
  so0->mutable_pfc()->add_pause_sent(10);
  so0->mutable_pfc()->add_pause_sent(11);
  so0->mutable_pfc()->add_pause_received(12);
  v1::Port* in_pod = response.add_ports();
  in_pod->set_name("so1");
  in_pod->set_present(true);
  in_pod->set_attached_to("/var/run/netns/cni-1");
  v1::Port* absent = response.add_ports();
  absent->set_name("so2");

  const std::vector<diag::peer::PortCounterValues> counters = CountersOf(response);
  ASSERT_EQ(counters.size(), 1);
  EXPECT_EQ(counters[0].port, "so0");
  EXPECT_THAT(counters[0].values,
              ElementsAre(Pair("congestion.cnp_sent", 6), Pair("fec.uncorrectable_blocks", 8),
                          Pair("link.carrier_down_changes", 5), Pair("link.receive_drops", 2),
                          Pair("link.receive_errors", 1), Pair("link.transmit_drops", 4),
                          Pair("link.transmit_errors", 3), Pair("lossless.pause_storm_errors", 7),
                          Pair("pfc.pause_received.0", 12), Pair("pfc.pause_sent.0", 10),
                          Pair("pfc.pause_sent.1", 11), Pair("phy.link_toggles", 9),
                          Pair("transport.duplicate_request", 903)));
}

}  // namespace
}  // namespace rocenet::diagd
