// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// fakeLogs serves each container's log as "POD/CONTAINER[ previous]", and
// fails for the containers named in missing.
type fakeLogs struct{ missing map[string]bool }

func (f fakeLogs) Logs(_ context.Context, _, pod, container string, previous bool) (io.ReadCloser, error) {
	if f.missing[pod+"/"+container] {
		return nil, errors.New("container not found")
	}
	text := pod + "/" + container
	if previous {
		text += " previous"
	}
	return io.NopCloser(strings.NewReader(text + "\n")), nil
}

// untar is the archive's files by name.
func untar(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = string(data)
	}
}

// A support case's archive: every rocenet object, the namespace's pods and
// their logs (a restarted container's previous run too), each running
// node's rocectl state; what could not be read listed, not fatal.
func TestMustGatherCollectsObjectsLogsAndEachNodesState(t *testing.T) {
	restarted := rocenetPod("rocenet-a", "gaudi-a", corev1.PodRunning, testNow)
	restarted.Spec.Containers = append(restarted.Spec.Containers, corev1.Container{Name: "node-reporter"})
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: RocenetdContainer, RestartCount: 2}}
	objects := append(threeNodes(), restarted,
		rocenetPod("rocenet-b", "gaudi-b", corev1.PodPending, testNow),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rocenet-diag", Namespace: DefaultRocenetNamespace},
			Data: map[string][]byte{"secret": []byte("do-not-ship")}},
		&v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "team"}})
	kube := newFakeClient(t, objects...)
	exec := &fakeExecutor{output: map[string]string{}}
	for file, command := range GatherCommands {
		exec.output[command[len(command)-1]] = `{"from": "` + file + `"}`
	}
	out := filepath.Join(t.TempDir(), "case.tar.gz")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"must-gather", "-o", out}, Env{
		Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr},
		Connect: func(*genericclioptions.ConfigFlags) (Clients, error) {
			return Clients{Kube: kube, Exec: exec, Logs: fakeLogs{missing: map[string]bool{"rocenet-a/node-reporter": true}}}, nil
		},
		Version: "0.1.0",
	})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	files := untar(t, out)
	var names []string
	top := ""
	for name := range files {
		names = append(names, name)
		top = strings.SplitN(name, "/", 2)[0]
	}
	sort.Strings(names)
	for _, want := range []string{"cluster/rocenetclusters.yaml", "cluster/rocenetnodes.yaml", "cluster/rocenettriages.yaml",
		"cluster/rocenetnodepolicies.yaml", "cluster/rocenetnetworks.yaml", "cluster/nodes.yaml", "namespace/pods.yaml", "namespace/daemonsets.yaml",
		"logs/rocenet-a/rocenetd.log", "logs/rocenet-a/rocenetd.previous.log", "logs/rocenet-b/rocenetd.log",
		"nodes/gaudi-a/health.json", "nodes/gaudi-a/topology.json", "README.txt", "errors.txt"} {
		if _, ok := files[top+"/"+want]; !ok {
			t.Errorf("no %s in the archive: %v", want, names)
		}
	}
	if got := files[top+"/logs/rocenet-a/rocenetd.previous.log"]; got != "rocenet-a/rocenetd previous\n" {
		t.Errorf("the previous log: %q", got)
	}
	if got := files[top+"/nodes/gaudi-a/addressing.json"]; got != `{"from": "addressing.json"}` {
		t.Errorf("gaudi-a's addressing: %q", got)
	}
	// The objects as kubectl prints them: a kind on every item.
	var nodes struct {
		Items []struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(files[top+"/cluster/rocenetnodes.yaml"]), &nodes); err != nil || len(nodes.Items) == 0 ||
		nodes.Items[0].Kind != "RocenetNode" {
		t.Errorf("rocenetnodes.yaml: %v %+v", err, nodes)
	}
	if !strings.Contains(files[top+"/cluster/rocenettriages.yaml"], "name: nightly") {
		t.Errorf("the triage of another namespace is missing")
	}
	for name, data := range files {
		if strings.Contains(data, "do-not-ship") {
			t.Errorf("a Secret's value in %s", name)
		}
	}
	// The pending pod's node and the missing log are said, not fatal.
	for _, want := range []string{"nodes/gaudi-b: rocenet pod rocenet-system/rocenet-b is Pending, not Running",
		"the log of rocenet-system/rocenet-a container node-reporter: container not found"} {
		if !strings.Contains(files[top+"/errors.txt"], want) || !strings.Contains(stderr.String(), want) {
			t.Errorf("errors.txt %q and stderr %q do not say %q", files[top+"/errors.txt"], stderr.String(), want)
		}
	}
	if !strings.Contains(stdout.String(), "wrote "+out) || !strings.Contains(stdout.String(), "1 nodes asked") {
		t.Errorf("stdout %q", stdout.String())
	}
	for _, call := range exec.calls {
		if call.pod != "rocenet-a" || call.container != RocenetdContainer {
			t.Errorf("exec in %s/%s", call.pod, call.container)
		}
	}
	if len(exec.calls) != len(GatherCommands) {
		t.Errorf("%d rocectl commands run, want %d", len(exec.calls), len(GatherCommands))
	}
}
