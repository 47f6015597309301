// SPDX-License-Identifier: Apache-2.0
#include "client/collective/plan.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/collective/yaml_text.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl::collective {
namespace {

constexpr char kWorkerRole[] = "workers";  // JobSet's replicated job
constexpr uint64_t kMaxBytes = uint64_t{4} << 30;

bool IsLabel(const std::string& text) {
  if (text.empty() || text.size() > 63) return false;
  for (char c : text) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return text.front() != '-' && text.back() != '-';
}

bool IsSubdomain(const std::string& text) {
  if (text.empty() || text.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(text, '.')) {
    if (!IsLabel(std::string(label))) return false;
  }
  return true;
}

absl::Status Bad(absl::string_view flag, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("flag --", flag, ": ", reason));
}

int Digits(size_t n) { return static_cast<int>(absl::StrCat(n).size()); }

// The longest pod host name the engine makes from --name; a host name is a
// DNS-1123 label (63 characters at most).
size_t LongestHostname(const PlanOptions& o) {
  const size_t last = o.nodes.empty() ? 0 : o.nodes.size() - 1;
  if (o.engine == Engine::kMpiJob) {
    return std::max(o.name.size() + 9, o.name.size() + 8 + Digits(last));  // -launcher, -worker-N
  }
  return o.name.size() + 1 + sizeof(kWorkerRole) - 1 + 3 + Digits(last);  // -workers-0-N
}

int Ranks(const PlanOptions& o) { return static_cast<int>(o.nodes.size()) * o.gaudis_per_node; }

YAML::Node Metadata(const PlanOptions& o) {
  YAML::Node meta;
  meta["name"] = o.name;
  meta["namespace"] = o.name_space;
  meta["labels"]["app.kubernetes.io/name"] = "hccl-demo";
  meta["labels"]["app.kubernetes.io/managed-by"] = "rocectl";
  return meta;
}

// One worker per named node: only those nodes, never two on one.
YAML::Node Affinity(const PlanOptions& o) {
  YAML::Node affinity;
  YAML::Node term;
  YAML::Node expression;
  expression["key"] = "kubernetes.io/hostname";
  expression["operator"] = "In";
  for (const std::string& node : o.nodes) expression["values"].push_back(node);
  term["matchExpressions"].push_back(expression);
  affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
      .push_back(term);
  YAML::Node spread;
  spread["labelSelector"]["matchLabels"]["rocenet.io/collective"] = o.name;
  spread["topologyKey"] = "kubernetes.io/hostname";
  affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"].push_back(spread);
  return affinity;
}

YAML::Node Env(const std::string& name, const std::string& value) {
  YAML::Node env;
  env["name"] = name;
  env["value"] = Quoted(value);
  return env;
}

YAML::Node NodeNameEnv() {
  YAML::Node env;
  env["name"] = "NODE_NAME";
  env["valueFrom"]["fieldRef"]["fieldPath"] = "spec.nodeName";
  return env;
}

YAML::Node HcclEnv(const PlanOptions& o) {
  YAML::Node env;
  env.push_back(Env("HCCL_COMM_ID", absl::StrCat(RankZeroHost(o), ":", kCommPort)));
  env.push_back(Env("HCL_GAUDINET_CONFIG_FILE", kGaudinetPath));
  env.push_back(Env("HCL_MAC_INFO_FILE", kMacInfoPath));
  return env;
}

// The worker pod template: Gaudis, ports, the attachment once per port.
YAML::Node WorkerPod(const PlanOptions& o, YAML::Node container) {
  YAML::Node pod;
  pod["metadata"]["labels"]["rocenet.io/collective"] = o.name;
  std::vector<std::string> networks(o.ports_per_node, o.network);
  pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] = absl::StrJoin(networks, ",");
  container["resources"]["limits"]["habana.ai/gaudi"] = o.gaudis_per_node;
  container["resources"]["limits"]["rocenet.io/scale-out-port"] = o.ports_per_node;
  // HCL pins its buffers for RDMA.
  container["securityContext"]["capabilities"]["add"].push_back("IPC_LOCK");
  pod["spec"]["affinity"] = Affinity(o);
  pod["spec"]["containers"].push_back(container);
  return pod;
}

// hccl_demo's size arguments, in bytes (no unit).
std::string Sizes(const PlanOptions& o) {
  if (o.min_bytes == o.max_bytes) return absl::StrCat("--size ", o.min_bytes);
  return absl::StrCat("--size_range ", o.min_bytes, " ", o.max_bytes);
}

// HCCL wants rank 0's IP address: wait for its DNS record, then use it.
constexpr char kResolveCommId[] =
    "host=\"${HCCL_COMM_ID%:*}\"; port=\"${HCCL_COMM_ID##*:}\"\n"
    "until getent hosts \"$host\" >/dev/null; do sleep 2; done\n"
    "addr=\"$(getent hosts \"$host\" | awk '{print $1; exit}')\"\n"
    "export HCCL_COMM_ID=\"$addr:$port\"\n";

// Each node runs run_hccl_demo.py for its 8 ranks (README: "Running HCCL
// demo on 2 servers"), node_id = the Job completion index.
std::string JobSetScript(const PlanOptions& o) {
  std::string script = absl::StrCat(
      "set -eu\n", "echo \"", kNodeMarker,
      " node_id=${JOB_COMPLETION_INDEX} host=$(hostname) node=${NODE_NAME}\"\n", kResolveCommId);
  for (const std::string& test : o.tests) {
    absl::StrAppend(&script, "python3 run_hccl_demo.py --test ", test, " --nranks ", Ranks(o),
                    " --node_id \"${JOB_COMPLETION_INDEX}\" \\\n  ", Sizes(o), " --loop ",
                    o.iterations, " --ranks_per_node ", o.gaudis_per_node, "\n");
  }
  return script;
}

// The launcher maps node ids to nodes, then runs the README's MPI form over
// mpi-operator's hostfile. ssh sessions do not see the pod's environment, so
// HCCL's variables travel with -x.
std::string LauncherScript(const PlanOptions& o) {
  std::string script = absl::StrCat("set -eu\n", kResolveCommId, "marker='echo \"", kNodeMarker,
                                    " node_id=$OMPI_COMM_WORLD_RANK host=$(hostname)'\n",
                                    "marker=\"$marker\"' node=$(cat /tmp/rocenet-node)\"'\n",
                                    "mpirun --allow-run-as-root -np ", o.nodes.size(),
                                    " --map-by ppr:1:node sh -c \"$marker\"\n");
  for (const std::string& test : o.tests) {
    absl::StrAppend(&script, "python3 run_hccl_demo.py --test ", test, " --loop ", o.iterations,
                    " ", Sizes(o), " \\\n  -mpi --hostfile /etc/mpi/hostfile -np ", Ranks(o),
                    " \\\n  -x HCCL_COMM_ID -x HCL_GAUDINET_CONFIG_FILE -x HCL_MAC_INFO_FILE\n");
  }
  return script;
}

YAML::Node Command(const std::string& script) {
  YAML::Node command;
  command.push_back("bash");
  command.push_back("-c");
  // No final newline: the literal block then ends where the script does.
  command.push_back(script.substr(0, script.find_last_not_of('\n') + 1));
  return command;
}

YAML::Node MpiJob(const PlanOptions& o) {
  YAML::Node job;
  job["apiVersion"] = "kubeflow.org/v2beta1";
  job["kind"] = "MPIJob";
  job["metadata"] = Metadata(o);
  YAML::Node spec;
  spec["slotsPerWorker"] = o.gaudis_per_node;
  spec["launcherCreationPolicy"] = "WaitForWorkersReady";
  spec["runPolicy"]["backoffLimit"] = 0;
  spec["runPolicy"]["cleanPodPolicy"] = "Running";

  YAML::Node launcher;
  launcher["name"] = "launcher";
  launcher["image"] = o.image;
  launcher["command"] = Command(LauncherScript(o));
  launcher["env"] = HcclEnv(o);
  YAML::Node l;
  l["replicas"] = 1;
  l["restartPolicy"] = "Never";
  l["template"]["spec"]["containers"].push_back(launcher);
  spec["mpiReplicaSpecs"]["Launcher"] = l;

  YAML::Node worker;
  worker["name"] = "worker";
  worker["image"] = o.image;
  worker["command"] = Command(
      "set -eu\necho \"${NODE_NAME}\" > /tmp/rocenet-node\nmkdir -p /var/run/sshd\n"
      "exec /usr/sbin/sshd -De\n");
  YAML::Node env = HcclEnv(o);
  env.push_back(NodeNameEnv());
  worker["env"] = env;
  YAML::Node w;
  w["replicas"] = static_cast<int>(o.nodes.size());
  w["restartPolicy"] = "Never";
  w["template"] = WorkerPod(o, worker);
  spec["mpiReplicaSpecs"]["Worker"] = w;
  job["spec"] = spec;
  return job;
}

YAML::Node JobSet(const PlanOptions& o) {
  YAML::Node set;
  set["apiVersion"] = "jobset.x-k8s.io/v1alpha2";
  set["kind"] = "JobSet";
  set["metadata"] = Metadata(o);
  set["spec"]["network"]["enableDNSHostnames"] = true;
  set["spec"]["network"]["subdomain"] = o.name;
  set["spec"]["failurePolicy"]["maxRestarts"] = 0;

  YAML::Node container;
  container["name"] = "hccl-demo";
  container["image"] = o.image;
  container["command"] = Command(JobSetScript(o));
  YAML::Node env = HcclEnv(o);
  env.push_back(NodeNameEnv());
  container["env"] = env;
  YAML::Node pod = WorkerPod(o, container);
  pod["spec"]["restartPolicy"] = "Never";

  YAML::Node replicated;
  replicated["name"] = kWorkerRole;
  replicated["replicas"] = 1;
  YAML::Node job;
  job["completionMode"] = "Indexed";
  job["completions"] = static_cast<int>(o.nodes.size());
  job["parallelism"] = static_cast<int>(o.nodes.size());
  job["backoffLimit"] = 0;
  job["template"] = pod;
  replicated["template"]["spec"] = job;
  set["spec"]["replicatedJobs"].push_back(replicated);
  return set;
}

}  // namespace

std::string RankZeroHost(const PlanOptions& o) {
  if (o.engine == Engine::kMpiJob) {
    return absl::StrCat(o.name, "-worker-0.", o.name, ".", o.name_space, ".svc");
  }
  return absl::StrCat(o.name, "-", kWorkerRole, "-0-0.", o.name);
}

absl::Status ValidatePlan(const PlanOptions& o) {
  if (o.nodes.size() < 2) {
    return Bad("nodes",
               absl::StrCat("a collective test needs at least 2 nodes, got ", o.nodes.size()));
  }
  std::set<std::string> seen;
  for (const std::string& node : o.nodes) {
    if (!IsSubdomain(node)) {
      return Bad("nodes", absl::StrCat("\"", node,
                                       "\" is not a node name (a DNS-1123 subdomain: lower-case "
                                       "letters, digits, '-' and '.')"));
    }
    if (!seen.insert(node).second) {
      return Bad("nodes", absl::StrCat("\"", node, "\" is named twice; one worker runs per node"));
    }
  }
  if (o.image.empty()) return Bad("image", "an image with hccl_demo is required");
  for (char c : o.image) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      return Bad("image", absl::StrCat("\"", o.image, "\" contains white space"));
    }
  }
  if (o.tests.empty()) return Bad("test", "no test to run");
  if (o.gaudis_per_node < 1 || o.gaudis_per_node > 8) {
    return Bad("gaudis-per-node", absl::StrCat(o.gaudis_per_node, " is not in 1..8"));
  }
  if (o.ports_per_node < 1 || o.ports_per_node > 4 * o.gaudis_per_node) {
    return Bad("ports-per-node",
               absl::StrCat(o.ports_per_node, " is not in 1..", 4 * o.gaudis_per_node,
                            " (at most 4 scale-out ports per Gaudi)"));
  }
  const std::string network = o.network.substr(o.network.find('/') + 1);
  const std::string network_ns =
      o.network.find('/') == std::string::npos ? "" : o.network.substr(0, o.network.find('/'));
  if (!IsSubdomain(network) || (o.network.find('/') != std::string::npos && !IsLabel(network_ns))) {
    return Bad("network", absl::StrCat("\"", o.network,
                                       "\" is not a NetworkAttachmentDefinition name "
                                       "([NAMESPACE/]NAME, DNS-1123)"));
  }
  if (!IsLabel(o.name_space)) {
    return Bad("namespace", absl::StrCat("\"", o.name_space, "\" is not a DNS-1123 label"));
  }
  if (!IsLabel(o.name)) {
    return Bad("name", absl::StrCat("\"", o.name,
                                    "\" is not a DNS-1123 label (lower-case letters, digits, "
                                    "'-', at most 63)"));
  }
  if (LongestHostname(o) > 63) {
    return Bad("name", absl::StrCat("\"", o.name,
                                    "\" is too long: the pod host names made from "
                                    "it would exceed 63 characters"));
  }
  const uint64_t floor = 4 * static_cast<uint64_t>(Ranks(o));  // a float per rank (all2all)
  if (o.min_bytes < floor) {
    return Bad("min-bytes",
               absl::StrCat(o.min_bytes, " is below ", floor, " bytes (one float per rank)"));
  }
  if (o.max_bytes < o.min_bytes) {
    return Bad("max-bytes", absl::StrCat(o.max_bytes, " is below --min-bytes ", o.min_bytes));
  }
  if (o.max_bytes > kMaxBytes) {
    return Bad("max-bytes", absl::StrCat(o.max_bytes, " is above 4G"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PlanOptions>> SplitPlan(const PlanOptions& options) {
  if (options.split != 1 && options.split != 2 && options.split != 4 && options.split != 8) {
    return Bad("split", absl::StrCat(options.split, " is not 2, 4 or 8"));
  }
  const size_t groups = static_cast<size_t>(options.split);
  if (options.nodes.size() < 2 * groups) {
    return Bad("split", absl::StrCat(options.nodes.size(), " nodes do not make ", groups,
                                     " groups of at least 2"));
  }
  std::vector<PlanOptions> out;
  size_t next = 0;
  for (size_t i = 0; i < groups; ++i) {
    // The first groups take one more node when the nodes do not divide.
    const size_t size = options.nodes.size() / groups + (i < options.nodes.size() % groups);
    PlanOptions& group = out.emplace_back(options);
    group.split = 1;
    group.nodes.assign(options.nodes.begin() + next, options.nodes.begin() + next + size);
    if (groups > 1) group.name = absl::StrCat(options.name, "-", groups, "-", i);
    next += size;
  }
  return out;
}

absl::StatusOr<std::string> RenderPlan(const PlanOptions& options) {
  if (absl::Status status = ValidatePlan(options); !status.ok()) return status;
  absl::StatusOr<std::vector<PlanOptions>> groups = SplitPlan(options);
  if (!groups.ok()) return groups.status();
  std::string out;
  for (const PlanOptions& group : *groups) {
    // A group's name is longer than the whole's: its host names too.
    if (absl::Status status = ValidatePlan(group); !status.ok()) return status;
    if (groups->size() > 1) {
      absl::StrAppend(&out, "# ", group.name, ": nodes ", absl::StrJoin(group.nodes, ","), "\n");
    }
    absl::StrAppend(
        &out, ToYamlDocument(group.engine == Engine::kMpiJob ? MpiJob(group) : JobSet(group)));
  }
  return out;
}

}  // namespace rocenet::rocectl::collective
