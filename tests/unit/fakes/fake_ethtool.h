// SPDX-License-Identifier: Apache-2.0
// FakeEthtool: driver names and ethtool statistics per interface, set by the
// test. Stateful: a device the test never named is NotFound, as the kernel
// answers ENODEV; one without statistics answers an empty list. Not
// thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "daemon/os/ethtool.h"

namespace rocenet::testing {

class FakeEthtool final : public os::Ethtool {
 public:
  void SetDriver(const std::string& ifname, const std::string& driver,
                 const std::string& firmware_version = "") {
    drivers_[ifname] = {driver, firmware_version};
  }
  void SetStatistic(const std::string& ifname, const std::string& name, uint64_t value) {
    std::vector<os::NamedCounter>& stats = stats_[ifname];
    for (auto& [have, old] : stats) {
      if (have == name) {
        old = value;
        return;
      }
    }
    stats.emplace_back(name, value);
  }
  // The statistic is no longer in the driver's list.
  void RemoveStatistic(const std::string& ifname, const std::string& name) {
    std::erase_if(stats_[ifname], [&](const os::NamedCounter& c) { return c.first == name; });
  }

  absl::StatusOr<os::DriverInfo> Driver(absl::string_view ifname) override {
    auto it = drivers_.find(std::string(ifname));
    if (it == drivers_.end()) {
      return absl::NotFoundError(
          absl::StrCat("ethtool driver info of ", ifname, ": No such device"));
    }
    return it->second;
  }
  absl::StatusOr<std::vector<os::NamedCounter>> Statistics(absl::string_view ifname) override {
    ++statistics_calls_;
    if (!drivers_.contains(std::string(ifname))) {
      return absl::NotFoundError(
          absl::StrCat("ethtool statistics of ", ifname, ": No such device"));
    }
    auto it = stats_.find(std::string(ifname));
    return it == stats_.end() ? std::vector<os::NamedCounter>() : it->second;
  }

  // LINKSTATE_GET's answer for a device; FEC_GET's statistics (a device
  // without is Unimplemented, as the kernel answers for a driver without
  // get_fec_stats).
  void SetLinkState(const std::string& ifname, const os::LinkState& state) {
    link_states_[ifname] = state;
  }
  void SetFecStats(const std::string& ifname, const os::FecStats& fec) { fec_[ifname] = fec; }

  absl::StatusOr<os::LinkState> GetLinkState(absl::string_view ifname) override {
    auto it = link_states_.find(std::string(ifname));
    return it == link_states_.end() ? os::LinkState() : it->second;
  }
  absl::StatusOr<os::FecStats> GetFecStats(absl::string_view ifname) override {
    ++fec_calls_;
    auto it = fec_.find(std::string(ifname));
    if (it == fec_.end()) return absl::UnimplementedError("no FEC statistics");
    return it->second;
  }

  // The module's EEPROM: its lower page (offset 0), and its upper pages
  // (offset 128) by (page, bank), 128 bytes each. A device without is
  // Unimplemented; a page it lacks is refused as the kernel refuses it.
  void SetModuleLowerPage(const std::string& ifname, const std::string& bytes) {
    modules_[ifname][{-1, 0}] = bytes;
  }
  void SetModulePage(const std::string& ifname, int page, int bank, const std::string& bytes) {
    modules_[ifname][{page, bank}] = bytes;
  }
  absl::StatusOr<std::string> ModuleEeprom(absl::string_view ifname, int page, int bank, int offset,
                                           int length) override {
    ++module_reads_;
    auto it = modules_.find(std::string(ifname));
    if (it == modules_.end()) return absl::UnimplementedError("no module");
    auto found = it->second.find(offset == 0 ? std::pair(-1, 0) : std::pair(page, bank));
    if (found == it->second.end() || length != 128) return absl::InvalidArgumentError("no page");
    return found->second;
  }

  int statistics_calls() const { return statistics_calls_; }
  int fec_calls() const { return fec_calls_; }
  int module_reads() const { return module_reads_; }

 private:
  std::map<std::string, os::LinkState> link_states_;
  std::map<std::string, os::FecStats> fec_;
  int fec_calls_ = 0;
  std::map<std::string, std::map<std::pair<int, int>, std::string>> modules_;
  int module_reads_ = 0;
  std::map<std::string, os::DriverInfo> drivers_;
  std::map<std::string, std::vector<os::NamedCounter>> stats_;
  int statistics_calls_ = 0;
};

}  // namespace rocenet::testing
