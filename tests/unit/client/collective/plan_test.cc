// SPDX-License-Identifier: Apache-2.0
#include "client/collective/plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl::collective {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

PlanOptions Options(Engine engine, int nodes) {
  PlanOptions o;
  o.engine = engine;
  for (int i = 0; i < nodes; ++i) o.nodes.push_back("gaudi-" + std::to_string(i));
  o.image = "registry.example/hccl-demo:1.21.0";
  return o;
}

YAML::Node Render(const PlanOptions& o) {
  absl::StatusOr<std::string> yaml = RenderPlan(o);
  EXPECT_TRUE(yaml.ok()) << yaml.status();
  return YAML::Load(yaml.value_or(""));
}

std::string Env(const YAML::Node& container, const std::string& name) {
  for (const YAML::Node& e : container["env"]) {
    if (e["name"].as<std::string>() == name && e["value"]) return e["value"].as<std::string>();
  }
  return "";
}

void ExpectWorkerPod(const YAML::Node& pod, const PlanOptions& o) {
  EXPECT_EQ(
      pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].as<std::string>(),
      "rocenet" + [] {
        std::string s;
        for (int i = 1; i < 24; ++i) s += ",rocenet";
        return s;
      }());
  const YAML::Node term =
      pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
         ["nodeSelectorTerms"][0]["matchExpressions"][0];
  EXPECT_EQ(term["key"].as<std::string>(), "kubernetes.io/hostname");
  EXPECT_EQ(term["operator"].as<std::string>(), "In");
  EXPECT_THAT(term["values"].as<std::vector<std::string>>(), ElementsAreArray(o.nodes));
  const YAML::Node spread = pod["spec"]["affinity"]["podAntiAffinity"]
                               ["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(spread["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
  EXPECT_EQ(spread["labelSelector"]["matchLabels"]["rocenet.io/collective"].as<std::string>(),
            o.name);
  EXPECT_EQ(pod["metadata"]["labels"]["rocenet.io/collective"].as<std::string>(), o.name);
  const YAML::Node c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["habana.ai/gaudi"].as<int>(), 8);
  EXPECT_EQ(c["resources"]["limits"]["rocenet.io/scale-out-port"].as<int>(), 24);
  EXPECT_EQ(Env(c, "HCL_GAUDINET_CONFIG_FILE"), "/etc/habanalabs/rocenet/gaudinet.json");
  EXPECT_EQ(Env(c, "HCL_MAC_INFO_FILE"), "/etc/habanalabs/rocenet/macAddrInfo.json");
}

class MpiJobTest : public ::testing::TestWithParam<int> {};

TEST_P(MpiJobTest, OneWorkerPerNamedNode) {
  const PlanOptions o = Options(Engine::kMpiJob, GetParam());
  const YAML::Node job = Render(o);
  EXPECT_EQ(job["apiVersion"].as<std::string>(), "kubeflow.org/v2beta1");
  EXPECT_EQ(job["kind"].as<std::string>(), "MPIJob");
  EXPECT_EQ(job["spec"]["slotsPerWorker"].as<int>(), 8);
  const YAML::Node worker = job["spec"]["mpiReplicaSpecs"]["Worker"];
  EXPECT_EQ(worker["replicas"].as<int>(), GetParam());
  ExpectWorkerPod(worker["template"], o);
  const YAML::Node launcher =
      job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(Env(launcher, "HCCL_COMM_ID"), "hccl-demo-worker-0.hccl-demo.default.svc:5555");
  const std::string script = launcher["command"][2].as<std::string>();
  EXPECT_THAT(script, HasSubstr("python3 run_hccl_demo.py --test all_reduce --loop 1000 "
                                "--size_range 1048576 268435456"));
  EXPECT_THAT(script,
              HasSubstr("-mpi --hostfile /etc/mpi/hostfile -np " + std::to_string(8 * GetParam())));
  EXPECT_THAT(script,
              HasSubstr("-x HCCL_COMM_ID -x HCL_GAUDINET_CONFIG_FILE -x HCL_MAC_INFO_FILE"));
  EXPECT_FALSE(launcher["resources"]) << "the launcher takes no Gaudi";
}

INSTANTIATE_TEST_SUITE_P(Nodes, MpiJobTest, ::testing::Values(2, 4));

class JobSetTest : public ::testing::TestWithParam<int> {};

TEST_P(JobSetTest, IndexedJobOnePodPerNode) {
  PlanOptions o = Options(Engine::kJobSet, GetParam());
  o.tests = {kAllReduce, kAllToAll};
  const YAML::Node set = Render(o);
  EXPECT_EQ(set["apiVersion"].as<std::string>(), "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(set["kind"].as<std::string>(), "JobSet");
  const YAML::Node rjob = set["spec"]["replicatedJobs"][0];
  EXPECT_EQ(rjob["replicas"].as<int>(), 1);
  const YAML::Node job = rjob["template"]["spec"];
  EXPECT_EQ(job["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(job["completions"].as<int>(), GetParam());
  EXPECT_EQ(job["parallelism"].as<int>(), GetParam());
  ExpectWorkerPod(job["template"], o);
  const YAML::Node c = job["template"]["spec"]["containers"][0];
  EXPECT_EQ(Env(c, "HCCL_COMM_ID"), "hccl-demo-workers-0-0.hccl-demo:5555");
  const std::string script = c["command"][2].as<std::string>();
  for (const char* test : {"all_reduce", "all2all"}) {
    EXPECT_THAT(script, HasSubstr(std::string("python3 run_hccl_demo.py --test ") + test +
                                  " --nranks " + std::to_string(8 * GetParam()) +
                                  " --node_id \"${JOB_COMPLETION_INDEX}\""));
  }
  EXPECT_THAT(script, HasSubstr("--ranks_per_node 8"));
  EXPECT_THAT(script, HasSubstr("rocenet-collective: node_id=${JOB_COMPLETION_INDEX}"));
}

INSTANTIATE_TEST_SUITE_P(Nodes, JobSetTest, ::testing::Values(2, 4));

TEST(PlanTest, SameSizeIsOneSize) {
  PlanOptions o = Options(Engine::kJobSet, 2);
  o.min_bytes = o.max_bytes = 32 << 20;
  EXPECT_THAT(RenderPlan(o).value_or(""), HasSubstr("--size 33554432 --loop"));
}

// The halves and quarters of a bisection: consecutive groups, the first
// ones a node larger, each a job of its own whose rank 0 is its own.
TEST(PlanTest, ASplitIsOneJobAGroupOfConsecutiveNodes) {
  PlanOptions o = Options(Engine::kMpiJob, 9);
  o.split = 4;
  ASSERT_OK_AND_ASSIGN(const std::vector<PlanOptions> groups, SplitPlan(o));
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_THAT(groups[0].nodes, ElementsAreArray({"gaudi-0", "gaudi-1", "gaudi-2"}));
  EXPECT_THAT(groups[1].nodes, ElementsAreArray({"gaudi-3", "gaudi-4"}));
  EXPECT_THAT(groups[3].nodes, ElementsAreArray({"gaudi-7", "gaudi-8"}));
  EXPECT_EQ(groups[2].name, "hccl-demo-4-2");
  ASSERT_OK_AND_ASSIGN(const std::string yaml, RenderPlan(o));
  const std::vector<YAML::Node> docs = YAML::LoadAll(yaml);
  ASSERT_EQ(docs.size(), 4u);
  for (size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(docs[i]["metadata"]["name"].as<std::string>(), groups[i].name);
    const YAML::Node worker = docs[i]["spec"]["mpiReplicaSpecs"]["Worker"];
    EXPECT_EQ(worker["replicas"].as<size_t>(), groups[i].nodes.size());
    ExpectWorkerPod(worker["template"], groups[i]);
  }
  EXPECT_THAT(yaml, HasSubstr("# hccl-demo-4-1: nodes gaudi-3,gaudi-4\n---\n"));
  EXPECT_THAT(yaml, HasSubstr(RankZeroHost(groups[3])));
}

TEST(PlanTest, ASplitNeedsTwoNodesAGroupAndAPowerOfTwo) {
  PlanOptions o = Options(Engine::kJobSet, 7);
  o.split = 4;
  EXPECT_THAT(std::string(RenderPlan(o).status().message()),
              HasSubstr("flag --split: 7 nodes do not make 4 groups of at least 2"));
  o.split = 3;
  EXPECT_THAT(std::string(RenderPlan(o).status().message()),
              HasSubstr("flag --split: 3 is not 2, 4 or 8"));
  // The groups' names are longer: their host names are checked too.
  o = Options(Engine::kMpiJob, 4);
  o.split = 2;
  o.name = std::string(52, 'a');
  PlanOptions whole = o;
  whole.split = 1;
  EXPECT_TRUE(RenderPlan(whole).ok());
  EXPECT_THAT(std::string(RenderPlan(o).status().message()), HasSubstr("is too long"));
}

struct BadCase {
  const char* what;
  void (*edit)(PlanOptions*);
  const char* message;
};

class ValidationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ValidationTest, NamesTheFlagAndTheReason) {
  PlanOptions o = Options(Engine::kMpiJob, 2);
  GetParam().edit(&o);
  const absl::Status status = RenderPlan(o).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidationTest,
    ::testing::Values(
        BadCase{"one node", [](PlanOptions* o) { o->nodes = {"a"}; },
                "flag --nodes: a collective test needs at least 2 nodes, got 1"},
        BadCase{"no node", [](PlanOptions* o) { o->nodes.clear(); }, "at least 2 nodes, got 0"},
        BadCase{"bad node", [](PlanOptions* o) { o->nodes[1] = "Gaudi_B"; },
                "flag --nodes: \"Gaudi_B\" is not a node name"},
        BadCase{"twice", [](PlanOptions* o) { o->nodes[1] = o->nodes[0]; },
                "flag --nodes: \"gaudi-0\" is named twice"},
        BadCase{"no image", [](PlanOptions* o) { o->image.clear(); },
                "flag --image: an image with hccl_demo is required"},
        BadCase{"spaced image", [](PlanOptions* o) { o->image = "a b"; },
                "flag --image: \"a b\" contains white space"},
        BadCase{"gaudis", [](PlanOptions* o) { o->gaudis_per_node = 9; },
                "flag --gaudis-per-node: 9 is not in 1..8"},
        BadCase{"ports", [](PlanOptions* o) { o->ports_per_node = 0; },
                "flag --ports-per-node: 0 is not in 1..32"},
        BadCase{"network", [](PlanOptions* o) { o->network = "Roce Net"; },
                "flag --network: \"Roce Net\" is not a NetworkAttachmentDefinition name"},
        BadCase{"namespace", [](PlanOptions* o) { o->name_space = "a.b"; },
                "flag --namespace: \"a.b\" is not a DNS-1123 label"},
        BadCase{"name", [](PlanOptions* o) { o->name = "HCCL"; },
                "flag --name: \"HCCL\" is not a DNS-1123 label"},
        BadCase{"long name", [](PlanOptions* o) { o->name = std::string(60, 'a'); },
                "is too long: the pod host names made from it would exceed 63"},
        BadCase{"tiny", [](PlanOptions* o) { o->min_bytes = 8; },
                "flag --min-bytes: 8 is below 64 bytes (one float per rank)"},
        BadCase{"inverted", [](PlanOptions* o) { o->max_bytes = o->min_bytes - 1; },
                "flag --max-bytes: 1048575 is below --min-bytes 1048576"},
        BadCase{"huge", [](PlanOptions* o) { o->max_bytes = uint64_t{8} << 30; },
                "flag --max-bytes: 8589934592 is above 4G"},
        BadCase{"no test", [](PlanOptions* o) { o->tests.clear(); }, "flag --test: no test"}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
      std::string name = info.param.what;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace rocenet::rocectl::collective
