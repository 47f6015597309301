// SPDX-License-Identifier: Apache-2.0
// What the host outputs' tests share: every output on, at its usual path,
// and a Gaudi port that is ready (provisioned, with its switch's MAC).
#pragma once

#include <optional>
#include <string>

#include "daemon/outputs/host_outputs.h"
#include "tests/unit/fakes/fake_filesystem.h"

namespace rocenet::outputs::fixture {

inline constexpr char kGaudinet[] = "/etc/habanalabs/gaudinet.json";
inline constexpr char kNetworkDir[] = "/etc/systemd/network";
inline constexpr char kNfd[] = "/etc/kubernetes/node-feature-discovery/features.d/rocenet";

inline std::string NetworkFile(const std::string& name) {
  return std::string(kNetworkDir) + "/" + name;
}

inline OutputConfig AllOutputs() {
  OutputConfig config;
  config.gaudinet_path = kGaudinet;
  config.networkd_dir = kNetworkDir;
  config.nfd_features_path = kNfd;
  return config;
}

inline PortOutput Ready(const std::string& name, int index) {
  PortOutput port;
  port.name = name;
  port.gaudi = true;
  port.mac = "b0:fd:0b:f0:28:1" + std::to_string(index);
  port.provisioned = true;
  port.local_ip = "10.200." + std::to_string(index) + ".1";
  port.prefix_length = 30;
  port.gateway_ip = "10.200." + std::to_string(index) + ".2";
  port.gateway_mac = "0c:42:a1:00:00:0" + std::to_string(index);
  port.mtu = 8000;
  port.routes = {{"10.200.0.0/16", port.gateway_ip}};
  port.healthy = true;
  return port;
}

inline std::optional<std::string> Content(const testing::FakeFileSystem& fs,
                                          const std::string& path) {
  std::optional<testing::FakeFileSystem::File> file = fs.GetFile(path);
  if (!file.has_value()) return std::nullopt;
  return file->content;
}

}  // namespace rocenet::outputs::fixture
