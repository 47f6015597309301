// SPDX-License-Identifier: Apache-2.0
// The counters of a run under every test's table.
#include "absl/strings/str_cat.h"
#include "client/render/diag_render.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void AddChange(v1::RunCounters* counters, const std::string& node, const std::string& counter,
               uint64_t increase, bool reset = false) {
  v1::CounterChange* c = counters->add_changes();
  c->set_node(node);
  c->set_port("so1");
  c->set_counter(counter);
  c->set_increase(increase);
  c->set_reset(reset);
}

TEST(RenderCountersTest, WhatMovedOnWhichPortAndWhoWasNotRead) {
  v1::RdmaResult r;
  r.set_ok(true);
  v1::RunCounters* counters = r.mutable_counters();
  counters->set_nodes_read(2);
  AddChange(counters, "n1", "transport.duplicate_request", 903);
  AddChange(counters, "n2", "fec.corrected_blocks", 12, true);
  counters->add_unread("n3: rocenetd ListPorts: connection refused");
  const std::string text = RenderRdma(r);
  EXPECT_THAT(text,
              HasSubstr("Counters that moved during the run (2 nodes read):\n"
                        "NODE   PORT   COUNTER                       INCREASE\n"
                        "n1     so1    transport.duplicate_request   903\n"
                        "n2     so1    fec.corrected_blocks          12 (reset during the run)\n"
                        "Counters not read: n3: rocenetd ListPorts: connection refused\n"));
  EXPECT_THAT(text, HasSubstr("\nok\n"));
}

TEST(RenderCountersTest, AQuietRunSaysNothingMovedAndAResultWithoutCountersSaysNothing) {
  v1::BandwidthResult r;
  r.mutable_counters()->set_nodes_read(1);
  EXPECT_THAT(RenderBandwidth(r),
              HasSubstr("\nCounters: none moved during the run (1 node read)\n"));
  EXPECT_THAT(RenderBandwidth(v1::BandwidthResult()), Not(HasSubstr("Counters")));
}

TEST(RenderCountersTest, ALongListIsCutWithTheCountOfTheRest) {
  v1::AllreduceResult r;
  r.mutable_counters()->set_nodes_read(64);
  for (int i = 0; i < 50; ++i)
    AddChange(r.mutable_counters(), absl::StrCat("n", i), "link.receive_drops", 1);
  const std::string text = RenderAllreduce(r);
  EXPECT_THAT(text, HasSubstr("n39 "));
  EXPECT_THAT(text, Not(HasSubstr("n40 ")));
  EXPECT_THAT(text, HasSubstr("... and 10 more (-o json lists them all)\n"));
}

TEST(RenderCountersTest, ManyNodesNotReadAreCountedNotListed) {
  v1::ReachResult r;
  for (int i = 0; i < 12; ++i) {
    r.mutable_counters()->add_unread(absl::StrCat("n", i, ": connect: Connection refused"));
  }
  const std::string text = RenderReach(r);
  EXPECT_THAT(text, HasSubstr("Counters not read: n9: connect: Connection refused\n"
                              "Counters not read on 2 more nodes (-o json lists them all)\n"));
  EXPECT_THAT(text, Not(HasSubstr("n10:")));
}

}  // namespace
}  // namespace rocenet::rocectl
