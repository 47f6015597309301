// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

const examplesDir = "../../../packaging/kubernetes/examples"

// podTemplates are the pod templates of a shipped runtime or job, by
// where they are (Trainer's runtimes, the training operator's
// PyTorchJob, the MPI operator's MPIJob).
func podTemplates(t *testing.T, doc map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	name := doc["metadata"].(map[string]any)["name"].(string)
	spec := doc["spec"].(map[string]any)
	switch doc["kind"] {
	case "ClusterTrainingRuntime":
		jobs := spec["template"].(map[string]any)["spec"].(map[string]any)["replicatedJobs"].([]any)
		for _, j := range jobs {
			job := j.(map[string]any)
			out[name+"/"+job["name"].(string)] =
				job["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
		}
	case "PyTorchJob", "MPIJob":
		field := map[any]string{"PyTorchJob": "pytorchReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}[doc["kind"]]
		for role, r := range spec[field].(map[string]any) {
			out[name+"/"+role] = r.(map[string]any)["template"].(map[string]any)
		}
	}
	return out
}

// The fragment the ML engineer is told to merge: what `kubectl rocenet
// network fragment --gaudis 8` prints for the shipped RocenetNetwork.
type fragment struct {
	networks []string
	limits   map[string]any
}

func shippedFragment(t *testing.T) fragment {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(examplesDir, "rocenet-network.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var n v1alpha1.RocenetNetwork
	if err := yaml.UnmarshalStrict(raw, &n); err != nil {
		t.Fatalf("rocenet-network.yaml: %v", err)
	}
	var out strings.Builder
	if err := RenderFragment(&out, &n, 8, 3); err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := yaml.Unmarshal([]byte(out.String()), &f); err != nil {
		t.Fatal(err)
	}
	annotations := f["metadata"].(map[string]any)["annotations"].(map[string]any)
	container := f["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	return fragment{strings.Split(annotations[NetworksAnnotation].(string), ","),
		container["resources"].(map[string]any)["limits"].(map[string]any)}
}

// Every shipped training pod that holds Gaudis asks exactly what the
// fragment prints for the shipped network: a user who starts from either
// gets the same pod.
func TestShippedTrainingJobsAskWhatTheFragmentPrints(t *testing.T) {
	want := shippedFragment(t)
	files, err := filepath.Glob(filepath.Join(examplesDir, "training", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no training examples: %v", err)
	}
	held := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var doc map[string]any
			if err := decoder.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if doc == nil {
				continue
			}
			for where, template := range podTemplates(t, doc) {
				container := template["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
				resources, _ := container["resources"].(map[string]any)
				limits, _ := resources["limits"].(map[string]any)
				if _, ok := limits[GaudiResource]; !ok {
					continue
				}
				held++
				annotations := template["metadata"].(map[string]any)["annotations"].(map[string]any)
				var networks []string
				for _, name := range strings.Split(annotations[NetworksAnnotation].(string), ",") {
					networks = append(networks, strings.TrimSpace(name))
				}
				if !reflect.DeepEqual(networks, want.networks) {
					t.Errorf("%s: networks %v, the fragment's %v", where, networks, want.networks)
				}
				if !reflect.DeepEqual(limits, want.limits) {
					t.Errorf("%s: limits %v, the fragment's %v", where, limits, want.limits)
				}
			}
		}
		f.Close()
	}
	if held < 4 {
		t.Errorf("%d Gaudi pod templates in the examples, want the runtimes', the PyTorchJob's and the MPIJob's", held)
	}
}
