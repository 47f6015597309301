// SPDX-License-Identifier: Apache-2.0
// Multus device-info files (device-info spec 1.1): how a device plugin tells
// the CNI side which device it allocated.
//
// Multus reads <dir>/<resource>-<device id>-device.json for every device
// kubelet assigned to the pod and hands it to the CNI plugin, so the
// rocenet CNI plugin can be matched to exactly the allocated port. Pure
// functions, no I/O; thread-compatible.
#pragma once

#include <string>

#include "plugins/device/port_info.h"

namespace rocenet::device {

inline constexpr char kDefaultDevInfoDir[] = "/var/run/k8s.cni.cncf.io/devinfo/dp";
inline constexpr char kDevInfoVersion[] = "1.1.0";

// "<resource>-<id>-device.json" with every '/' of either part made '-', as
// Multus names the file it looks for; a '/' would otherwise be a directory.
std::string DevInfoFileName(const std::string& resource_name, const std::string& device_id);

// The file's JSON text: type "pci" with the port's PCI address, which must
// be known (the spec requires it; a port without one gets no file).
std::string DevInfoJson(const PortInfo& port);

}  // namespace rocenet::device
