// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/sysfs_scanner.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rocenet::inventory {
namespace {

// "0000:19:00.0": domain:bus:device.function. Driver directories also hold
// files such as "bind", "unbind" and "module" that are not devices.
bool LooksLikePciAddress(absl::string_view name) {
  return name.size() == 12 && name[4] == ':' && name[7] == ':' && name[10] == '.';
}

absl::string_view Basename(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

int SysfsScanner::ReadInt(const std::string& path, int fallback) const {
  absl::StatusOr<std::string> text = sysfs_->ReadAttribute(path);
  int value = 0;
  if (!text.ok() || !absl::SimpleAtoi(*text, &value)) return fallback;
  return value;
}

void SysfsScanner::ReadPciPlacement(const std::string& device_dir, PciInfo& pci) const {
  pci.numa_node = ReadInt(absl::StrCat(device_dir, "/numa_node"), -1);
  // The root complex is the first directory below devices/:
  // devices/pci0000:17/0000:17:01.0/0000:19:00.0.
  if (absl::StatusOr<std::string> resolved = sysfs_->Resolve(device_dir); resolved.ok()) {
    std::vector<absl::string_view> parts = absl::StrSplit(*resolved, '/');
    if (parts.size() >= 2 && parts[0] == "devices" && absl::StartsWith(parts[1], "pci")) {
      pci.pcie_root = std::string(parts[1]);
    }
  }
}

std::map<std::string, int> SysfsScanner::ModulesByPci() const {
  // Module ids are attributes of the accel class device: pci_addr ties each
  // one to its PCI function.
  std::map<std::string, int> out;
  if (auto accels = sysfs_->ListDirectory("class/accel"); accels.ok()) {
    for (const std::string& accel : *accels) {
      const std::string dev = absl::StrCat("class/accel/", accel, "/device");
      absl::StatusOr<std::string> pci_addr = sysfs_->ReadAttribute(dev + "/pci_addr");
      const int module_id = ReadInt(dev + "/module_id", -1);
      if (pci_addr.ok() && module_id >= 0) out[*pci_addr] = module_id;
    }
  }
  return out;
}

std::vector<SysfsNetdev> SysfsScanner::ScanGaudi() const {
  const std::string driver_dir = absl::StrCat("bus/pci/drivers/", kGaudiDriver);
  absl::StatusOr<std::vector<std::string>> devices = sysfs_->ListDirectory(driver_dir);
  if (!devices.ok()) return {};

  const std::map<std::string, int> module_by_pci = ModulesByPci();
  std::vector<SysfsNetdev> out;
  for (const std::string& address : *devices) {
    if (!LooksLikePciAddress(address)) continue;
    const std::string device_dir = absl::StrCat(driver_dir, "/", address);
    absl::StatusOr<std::vector<std::string>> netdevs = sysfs_->ListDirectory(device_dir + "/net");
    if (!netdevs.ok()) continue;
    PciInfo pci;
    pci.address = address;
    pci.driver = std::string(kGaudiDriver);
    ReadPciPlacement(device_dir, pci);
    if (auto it = module_by_pci.find(address); it != module_by_pci.end()) {
      pci.module_id = it->second;
    }
    for (const std::string& name : *netdevs) {
      SysfsNetdev netdev{.name = name, .pci = pci};
      netdev.pci.port_index = ReadInt(absl::StrCat(device_dir, "/net/", name, "/dev_port"), -1);
      out.push_back(std::move(netdev));
    }
  }
  return out;
}

PciInfo SysfsScanner::DescribeNetdev(absl::string_view name) const {
  PciInfo pci;
  const std::string device_dir = absl::StrCat("class/net/", name, "/device");
  absl::StatusOr<std::string> resolved = sysfs_->Resolve(device_dir);
  if (!resolved.ok()) return pci;
  const absl::string_view address = Basename(*resolved);
  if (!LooksLikePciAddress(address)) return pci;
  pci.address = std::string(address);
  if (auto driver = sysfs_->Resolve(device_dir + "/driver"); driver.ok()) {
    pci.driver = std::string(Basename(*driver));
  }
  ReadPciPlacement(device_dir, pci);
  pci.port_index = ReadInt(absl::StrCat("class/net/", name, "/dev_port"), -1);
  return pci;
}

PciInfo SysfsScanner::DescribePciFunction(absl::string_view address) const {
  PciInfo pci;
  if (!LooksLikePciAddress(address)) return pci;
  pci.address = std::string(address);
  const std::string device_dir = absl::StrCat("bus/pci/devices/", address);
  if (auto driver = sysfs_->Resolve(device_dir + "/driver"); driver.ok()) {
    pci.driver = std::string(Basename(*driver));
  }
  ReadPciPlacement(device_dir, pci);
  if (pci.driver == kGaudiDriver) {
    const std::map<std::string, int> modules = ModulesByPci();
    if (auto it = modules.find(pci.address); it != modules.end()) pci.module_id = it->second;
  }
  return pci;
}

}  // namespace rocenet::inventory
