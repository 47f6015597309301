// SPDX-License-Identifier: Apache-2.0
// rocenet-device-plugin: the kubelet device plugin of rocenet.
//
// Flags are defined here and only here and turned into the options of
// DaemonWatch, DevicePluginService and PluginLifecycle. Exit codes: 0 clean
// stop (SIGTERM/SIGINT), 1 runtime failure, 2 bad flags.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "daemon/common/flag_parser.h"
#include "daemon/common/logging.h"
#include "plugins/device/allocation_files.h"
#include "plugins/device/daemon_watch.h"
#include "plugins/device/devinfo.h"
#include "plugins/device/lifecycle.h"
#include "plugins/device/listed_marker.h"
#include "plugins/device/plugin_server.h"
#include "plugins/device/pod_resources.h"

ABSL_FLAG(std::string, daemon_socket, "/run/rocenet/rocenetd.sock", "rocenetd's unix socket");
ABSL_FLAG(std::string, kubelet_dir, "/var/lib/kubelet/device-plugins/",
          "kubelet's device-plugin directory (kubelet.sock and our socket)");
ABSL_FLAG(std::string, resource_name, "rocenet.io/scale-out-port",
          "extended resource name the ports are registered as");
ABSL_FLAG(std::string, socket_name, "",
          "our socket's file name in --kubelet-dir (default: from the resource name)");
ABSL_FLAG(std::string, devinfo_dir, rocenet::device::kDefaultDevInfoDir,
          "directory for Multus device-info files");
ABSL_FLAG(std::string, hcl_dir, "",
          "host directory for each allocation's HCL files, gaudinet.json and macAddrInfo.json "
          "(empty: none)");
ABSL_FLAG(std::string, hcl_container_dir, rocenet::device::kDefaultHclContainerDir,
          "where a container sees its directory of HCL files");
ABSL_FLAG(std::string, rdma_device_specs, "non-gaudi",
          "which allocated ports get their /dev/infiniband verbs nodes in the container: "
          "non-gaudi (Habana's runtime mounts Gaudi's), all or none");
ABSL_FLAG(std::string, pod_resources_socket, rocenet::device::kDefaultPodResourcesSocket,
          "kubelet's PodResources socket, asked which allocations still live (empty: never)");
ABSL_FLAG(absl::Duration, pod_resources_interval, absl::Seconds(10),
          "how often to ask kubelet which allocations still live");
ABSL_FLAG(absl::Duration, grace_period, absl::Seconds(30),
          "how long rocenetd may be unreachable before every device is Unhealthy");
ABSL_FLAG(std::string, sysfs_root, "/sys",
          "the host's sysfs, where the plugin sees whether the node has /dev/infiniband/rdma_cm "
          "(class/misc/rdma_cm: the rdma_ucm module loaded)");
ABSL_FLAG(std::string, ready_file, "",
          "a file that exists while kubelet holds the plugin's device list, for a readiness "
          "probe (empty: none)");
ABSL_FLAG(std::string, log_format, "text", "text (klog-like) or json");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error");

namespace rocenet::device {
namespace {

struct Options {
  DaemonWatchOptions watch;
  AllocateOptions allocate;
  std::string pod_resources_socket;
  absl::Duration pod_resources_interval;
  std::string ready_file;
  LifecycleOptions lifecycle;
  LogFormat log_format = LogFormat::kText;
  spdlog::level::level_enum log_level = spdlog::level::info;
};

std::string StripTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

absl::StatusOr<Options> BuildOptions() {
  Options o;
  std::string resource = absl::GetFlag(FLAGS_resource_name);
  if (resource.empty() || !absl::StrContains(resource, "/")) {
    return absl::InvalidArgumentError("--resource-name: \"" + resource +
                                      "\" is not <vendor domain>/<name>");
  }
  o.watch.socket = absl::GetFlag(FLAGS_daemon_socket);
  o.watch.grace = absl::GetFlag(FLAGS_grace_period);
  if (o.watch.grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--grace-period: must not be negative");
  }
  o.allocate.resource_name = resource;
  o.allocate.devinfo_dir = StripTrailingSlash(absl::GetFlag(FLAGS_devinfo_dir));
  o.allocate.hcl_dir = StripTrailingSlash(absl::GetFlag(FLAGS_hcl_dir));
  o.allocate.rdma_cm_sysfs =
      StripTrailingSlash(absl::GetFlag(FLAGS_sysfs_root)) + "/class/misc/rdma_cm";
  o.allocate.hcl_container_dir = StripTrailingSlash(absl::GetFlag(FLAGS_hcl_container_dir));
  if (!absl::StartsWith(o.allocate.hcl_container_dir, "/")) {
    return absl::InvalidArgumentError("--hcl-container-dir: \"" + o.allocate.hcl_container_dir +
                                      "\" is not an absolute path");
  }
  if (const std::string specs = absl::GetFlag(FLAGS_rdma_device_specs); specs == "non-gaudi") {
    o.allocate.rdma_device_specs = RdmaDeviceSpecs::kNonGaudi;
  } else if (specs == "all") {
    o.allocate.rdma_device_specs = RdmaDeviceSpecs::kAll;
  } else if (specs == "none") {
    o.allocate.rdma_device_specs = RdmaDeviceSpecs::kNone;
  } else {
    return absl::InvalidArgumentError("--rdma-device-specs: \"" + specs +
                                      "\" is not non-gaudi, all or none");
  }
  o.pod_resources_socket = absl::GetFlag(FLAGS_pod_resources_socket);
  o.ready_file = absl::GetFlag(FLAGS_ready_file);
  if (!o.ready_file.empty() && !absl::StartsWith(o.ready_file, "/")) {
    return absl::InvalidArgumentError("--ready-file: \"" + o.ready_file +
                                      "\" is not an absolute path");
  }
  o.pod_resources_interval = absl::GetFlag(FLAGS_pod_resources_interval);
  if (o.pod_resources_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--pod-resources-interval: must be positive");
  }
  o.lifecycle.kubelet_dir = StripTrailingSlash(absl::GetFlag(FLAGS_kubelet_dir));
  o.lifecycle.resource_name = resource;
  o.lifecycle.socket_name = absl::GetFlag(FLAGS_socket_name);
  if (o.lifecycle.socket_name.empty()) {
    o.lifecycle.socket_name = absl::StrReplaceAll(resource, {{"/", "_"}}) + ".sock";
  }
  if (absl::StrContains(o.lifecycle.socket_name, "/")) {
    return absl::InvalidArgumentError("--socket-name: a file name, not a path");
  }
  absl::StatusOr<LogFormat> format = ParseLogFormat(absl::GetFlag(FLAGS_log_format));
  if (!format.ok()) return format.status();
  o.log_format = *format;
  absl::StatusOr<spdlog::level::level_enum> level = ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  if (!level.ok()) return level.status();
  o.log_level = *level;
  return o;
}

// What a stopping plugin leaves of its allocations' files. A running pod's
// files are the pod's until kubelet frees its devices: the container has its
// HCL directory bind-mounted, so removing it (even to write it again at the
// same path) leaves the container a deleted directory. Whoever serves the
// resource next takes them over: a rolling update's new plugin, already
// serving, or this one restarted by kubelet after a crash, an OOM kill or a
// failed probe. Only the allocations kubelet no longer assigns go (after the
// grace that covers an Allocate kubelet has not recorded yet), as the
// device-info spec asks of a plugin's files. Without kubelet's answer (or
// with PodResources off) nothing is known to be free, and everything stays.
void ReleaseFilesOnStop(const Options& o, PluginLifecycle& lifecycle, const DeviceState& state,
                        AllocationFiles& files) {
  if (std::optional<std::string> other = lifecycle.OtherPluginServing(); other.has_value()) {
    SPDLOG_INFO("another device plugin serves {} on {}: leaving the allocations' files to it",
                o.lifecycle.resource_name, *other);
    return;
  }
  if (o.pod_resources_socket.empty()) {
    SPDLOG_INFO(
        "stopping: the allocations' files stay for the next plugin (no PodResources to "
        "tell which allocations ended)");
    return;
  }
  absl::StatusOr<std::vector<std::vector<std::string>>> assigned =
      AssignedDevices(o.pod_resources_socket, o.lifecycle.resource_name, absl::Seconds(5));
  if (!assigned.ok()) {
    SPDLOG_WARN("stopping: the allocations' files stay for the next plugin: {}",
                assigned.status().message());
    return;
  }
  const int ended =
      files.Retain(*assigned, state.Get().ports, absl::Now(), 3 * o.pod_resources_interval);
  SPDLOG_INFO(
      "stopping: {} allocation(s) ended; the files of {} live one(s) stay for the next "
      "plugin",
      ended, files.Allocations().size());
}

int Main(int argc, char** argv) {
  absl::StatusOr<ParsedCommandLine> cmd = ParseFlags(argc, argv);
  if (!cmd.ok()) {
    std::cerr << "rocenet-device-plugin: " << cmd.status().message() << "\n"
              << "Try 'rocenet-device-plugin --help'.\n";
    return 2;
  }
  if (cmd->help) {
    std::cout << "Usage: rocenet-device-plugin [flags]\n\n"
              << "The kubelet device plugin of rocenet: registers the node's RoCE\n"
              << "scale-out ports as an extended resource, with their health from rocenetd.\n\n"
              << "Flags:\n"
              << FlagUsage("plugins/device/main.cc");
    return 0;
  }
  if (cmd->version) {
    std::cout << "rocenet-device-plugin " << ROCENET_VERSION << "\n";
    return 0;
  }
  if (!cmd->positional.empty()) {
    std::cerr << "rocenet-device-plugin: unexpected argument \"" << cmd->positional[0] << "\"\n";
    return 2;
  }
  absl::StatusOr<Options> options = BuildOptions();
  if (!options.ok()) {
    std::cerr << "rocenet-device-plugin: " << options.status().message() << "\n";
    return 2;
  }
  InitLogging(options->log_format, options->log_level);

  // Signals go to one thread that stops the lifecycle; every other thread
  // (gRPC's too) inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  DeviceState state;
  AllocationFiles files(options->allocate);
  std::unique_ptr<NodeClient> node = MakeGrpcNodeClient(options->watch.socket);
  DaemonWatch watch(options->watch, node.get(), &state);
  const AllocateOptions allocate = options->allocate;
  // A rolling update's old plugin leaving makes kubelet forget that our
  // devices are healthy: tell it again.
  options->lifecycle.other_plugin_left = [&state] { state.Resend(); };
  ListedMarker listed(options->ready_file);
  // A file left by an earlier run of this container says nothing of this one.
  if (absl::Status s = listed.Clear(); !s.ok()) SPDLOG_WARN("{}", s.message());
  PluginLifecycle lifecycle(options->lifecycle, [&state, &files, &listed, allocate] {
    return std::make_unique<DevicePluginService>(&state, &files, &listed, allocate);
  });
  // Keeps the allocations' HCL files in step with the ports' addresses, and
  // ends those kubelet no longer assigns (after a grace that covers an
  // Allocate kubelet has not recorded yet).
  const Options& o = *options;
  std::thread refresher([&state, &files, &o] {
    uint64_t generation = 0;
    absl::Time next_sweep = absl::Now();
    bool sweep_failed = false;
    for (;;) {
      const absl::Duration wait =
          std::clamp(next_sweep - absl::Now(), absl::ZeroDuration(), absl::Seconds(1));
      DeviceSnapshot snapshot = state.WaitNewer(generation, wait);
      if (snapshot.shut_down) return;
      if (snapshot.generation != generation) {
        generation = snapshot.generation;
        files.Refresh(snapshot.ports);
      }
      if (o.pod_resources_socket.empty() || absl::Now() < next_sweep) continue;
      next_sweep = absl::Now() + o.pod_resources_interval;
      absl::StatusOr<std::vector<std::vector<std::string>>> assigned =
          AssignedDevices(o.pod_resources_socket, o.lifecycle.resource_name, absl::Seconds(5));
      if (!assigned.ok()) {
        // Said once per outage; the files stay until kubelet answers.
        if (!sweep_failed) SPDLOG_WARN("{}", assigned.status().message());
        sweep_failed = true;
        continue;
      }
      if (sweep_failed) SPDLOG_INFO("kubelet PodResources at {} answers", o.pod_resources_socket);
      sweep_failed = false;
      files.Retain(*assigned, snapshot.ports, absl::Now(), 3 * o.pod_resources_interval);
    }
  });
  std::thread signal_thread([&signals, &lifecycle] {
    int sig = 0;
    sigwait(&signals, &sig);
    SPDLOG_INFO("signal {}: stopping", sig);
    lifecycle.Stop();
  });
  SPDLOG_INFO("rocenet-device-plugin {} starting: resource {}, rocenetd at {}", ROCENET_VERSION,
              options->lifecycle.resource_name, options->watch.socket);
  watch.Start();
  absl::Status status = lifecycle.Run();
  if (absl::Status s = listed.Clear(); !s.ok()) SPDLOG_WARN("{}", s.message());
  state.Shutdown();
  watch.Stop();
  refresher.join();
  ReleaseFilesOnStop(*options, lifecycle, state, files);
  if (!status.ok()) {
    SPDLOG_ERROR("{}", status.message());
    // The signal thread still waits; a runtime failure ends the process.
    std::_Exit(1);
  }
  signal_thread.join();
  return 0;
}

}  // namespace
}  // namespace rocenet::device

int main(int argc, char** argv) { return rocenet::device::Main(argc, argv); }
