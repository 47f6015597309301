// SPDX-License-Identifier: Apache-2.0
// The Kubernetes manifests of the collective stage of triage: Habana's
// hccl_demo run across named nodes, one worker pod per node, as a Kubeflow
// MPIJob (kubeflow.org/v2beta1, mpi-operator v2) or a JobSet
// (jobset.x-k8s.io/v1alpha2).
//
// Every worker pod asks for the node's Gaudis and its rocenet scale-out
// ports, names the rocenet attachment once per port (Multus), and gets the
// environment HCCL reads: HCCL_COMM_ID (rank 0's address), and the files the
// rocenet device plugin mounts (docs/pods.md). Pure: options in, YAML text
// out; no I/O, thread-safe. Bad options are InvalidArgument errors whose
// message names the flag (`--nodes`, `--image`, ...) and the reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rocenet::rocectl::collective {

enum class Engine { kMpiJob, kJobSet };

// hccl_demo's test names (run_hccl_demo.py --test).
inline constexpr char kAllReduce[] = "all_reduce";
inline constexpr char kAllToAll[] = "all2all";

// Where rocenet's device plugin mounts HCL's files in the container
// (--hcl-container-dir, plugins/device/allocate.h).
inline constexpr char kGaudinetPath[] = "/etc/habanalabs/rocenet/gaudinet.json";
inline constexpr char kMacInfoPath[] = "/etc/habanalabs/rocenet/macAddrInfo.json";
// The port HCCL's rank 0 listens on for the others (hccl_demo README).
inline constexpr int kCommPort = 5555;
// Each worker prints this before the test, so a report can name the node of
// a rank: "rocenet-collective: node_id=<i> host=<hostname>".
inline constexpr char kNodeMarker[] = "rocenet-collective:";

struct PlanOptions {
  Engine engine = Engine::kMpiJob;
  std::vector<std::string> nodes;
  std::string image;
  // kAllReduce and/or kAllToAll, run in this order.
  std::vector<std::string> tests = {kAllReduce};
  int gaudis_per_node = 8;
  // Gaudi 2 HLS-2 and Gaudi 3 HLS-3: 3 scale-out ports per module, 24 per
  // 8-card node (HCL connectivity_autogen_HLS2/HLS3).
  int ports_per_node = 24;
  std::string network = "rocenet";
  std::string name_space = "default";
  std::string name = "hccl-demo";
  uint64_t min_bytes = uint64_t{1} << 20;
  uint64_t max_bytes = uint64_t{256} << 20;
  int iterations = 1000;
  // 1: one job over every node. 2, 4 or 8: the nodes, in the order given,
  // cut in that many groups of consecutive nodes (sizes differing by at
  // most one, each at least 2), one job each, named NAME-<split>-<i>: the
  // halves or quarters of a bisection (docs/diagnostics.md#bisection),
  // which run at once on their disjoint nodes.
  int split = 1;
};

// The first problem with `options`, naming its flag; OK when there is none.
absl::Status ValidatePlan(const PlanOptions& options);

// The manifest(s) as one YAML stream (documents start with "---"); with a
// split, each group's job after a comment naming its nodes.
absl::StatusOr<std::string> RenderPlan(const PlanOptions& options);

// The groups of a split: `options` for each, nodes and name its own.
absl::StatusOr<std::vector<PlanOptions>> SplitPlan(const PlanOptions& options);

// The worker pod's host name that rank 0 runs on, as other pods resolve it:
// "<name>-worker-0.<name>.<namespace>.svc" (mpi-operator's headless
// service) or "<name>-workers-0-0.<name>" (JobSet's subdomain).
std::string RankZeroHost(const PlanOptions& options);

}  // namespace rocenet::rocectl::collective
