// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/preferred.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::device {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// Two rails (A, B), two NUMA nodes, one module per pair of ports:
//   p0 A numa0 m0   p1 B numa0 m0   p2 A numa0 m1   p3 B numa0 m1
//   p4 A numa1 m2   p5 B numa1 m2   p6 A numa1 m3   p7 B numa1 m3
PortMap Fabric() {
  PortMap ports;
  for (int i = 0; i < 8; ++i) {
    PortInfo p;
    p.id = "p" + std::to_string(i);
    p.rail = i % 2 == 0 ? "A" : "B";
    p.numa_node = i < 4 ? 0 : 1;
    p.module_id = i / 2;
    ports[p.id] = p;
  }
  return ports;
}

const std::vector<std::string> kAll = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"};

struct Case {
  std::string name;
  std::vector<std::string> available;
  std::vector<std::string> must;
  int size;
  std::vector<std::string> want;
};

TEST(PreferAllocation, Table) {
  const std::vector<Case> cases = {
      {"two spread over both rails, same module", kAll, {}, 2, {"p0", "p1"}},
      {"four: both rails twice, NUMA 0 first", kAll, {}, 4, {"p0", "p1", "p2", "p3"}},
      {"must on NUMA 1 pulls the rest there", kAll, {"p4"}, 2, {"p4", "p5"}},
      {"must on module 3 prefers its other port", kAll, {"p6"}, 2, {"p6", "p7"}},
      {"rail beats NUMA", {"p0", "p2", "p5"}, {"p0"}, 2, {"p0", "p5"}},
      {"NUMA beats id order", {"p1", "p3", "p5"}, {"p6"}, 2, {"p6", "p5"}},
      {"module breaks NUMA ties", {"p4", "p5", "p7"}, {"p6"}, 2, {"p6", "p7"}},
      {"size larger than available", {"p3", "p1"}, {}, 5, {"p1", "p3"}},
      {"must only", kAll, {"p2", "p3"}, 2, {"p2", "p3"}},
      {"duplicates ignored", {"p1", "p1", "p0"}, {"p0", "p0"}, 2, {"p0", "p1"}},
      {"unknown ids come last", {"zz", "p0", "p2"}, {}, 2, {"p0", "zz"}},
      {"size zero", kAll, {}, 0, {}},
  };
  const PortMap ports = Fabric();
  for (const Case& c : cases) {
    EXPECT_THAT(PreferAllocation(c.available, c.must, c.size, ports), ElementsAreArray(c.want))
        << c.name;
  }
}

TEST(PreferAllocation, DoesNotDependOnInputOrder) {
  const PortMap ports = Fabric();
  std::vector<std::string> reversed(kAll.rbegin(), kAll.rend());
  EXPECT_EQ(PreferAllocation(kAll, {}, 3, ports), PreferAllocation(reversed, {}, 3, ports));
}

TEST(PreferAllocation, SpreadsEvenlyOverThreeRails) {
  PortMap ports;
  for (int i = 0; i < 9; ++i) {
    PortInfo p;
    p.id = "q" + std::to_string(i);
    p.rail = std::string(1, static_cast<char>('A' + i / 3));  // q0-2 A, q3-5 B, q6-8 C
    p.numa_node = 0;
    ports[p.id] = p;
  }
  std::vector<std::string> all;
  for (const auto& [id, p] : ports) all.push_back(id);
  EXPECT_THAT(PreferAllocation(all, {}, 4, ports), ElementsAre("q0", "q3", "q6", "q1"));
}

}  // namespace
}  // namespace rocenet::device
