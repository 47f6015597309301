// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed deepcopy code and CRDs, in the kustomize base and in the
// Helm chart, are what controller-gen makes of these types now: a type
// changed without `go generate ./...` fails here, and so does a chart
// whose CRDs differ from the base's.
func TestGeneratedCodeAndCRDsAreFresh(t *testing.T) {
	objects, crds, chart := t.TempDir(), t.TempDir(), t.TempDir()
	cmd := exec.Command("sh", "./generate.sh", objects, crds, chart)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, msg)
	}
	compare := func(dir, committed, pattern string) {
		fresh, _ := filepath.Glob(filepath.Join(dir, pattern))
		if len(fresh) == 0 {
			t.Fatalf("nothing generated into %s", dir)
		}
		for _, f := range fresh {
			want, _ := os.ReadFile(f)
			path := filepath.Join(committed, filepath.Base(f))
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go generate ./operator/...", path)
			}
		}
		old, _ := filepath.Glob(filepath.Join(committed, pattern))
		if len(old) != len(fresh) {
			t.Errorf("%s: %d files committed, %d generated", committed, len(old), len(fresh))
		}
	}
	compare(objects, ".", "zz_generated.*.go")
	compare(crds, "../../../packaging/kubernetes/base/crds", "*.yaml")
	compare(chart, "../../../packaging/helm/rocenet/crds", "*.yaml")
}
