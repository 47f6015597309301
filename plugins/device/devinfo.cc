// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/devinfo.h"

#include <algorithm>

#include "nlohmann/json.hpp"

namespace rocenet::device {
namespace {

std::string NoSlashes(std::string text) {
  std::replace(text.begin(), text.end(), '/', '-');
  return text;
}

}  // namespace

std::string DevInfoFileName(const std::string& resource_name, const std::string& device_id) {
  return NoSlashes(resource_name) + "-" + NoSlashes(device_id) + "-device.json";
}

std::string DevInfoJson(const PortInfo& port) {
  nlohmann::json info = {
      {"type", "pci"}, {"version", kDevInfoVersion}, {"pci", {{"pci-address", port.pci_address}}}};
  return info.dump(2) + "\n";
}

}  // namespace rocenet::device
