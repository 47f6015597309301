// SPDX-License-Identifier: Apache-2.0

package rocenetpb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed Go code is what proto/rocenet/v1 generates now: a .proto
// changed without `go generate ./...` fails here.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("SKIPPED: protoc is not installed (Debian: protobuf-compiler)")
	}
	out := t.TempDir()
	cmd := exec.Command("sh", "./generate.sh", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, msg)
	}
	fresh, err := filepath.Glob(filepath.Join(out, "*.go"))
	if err != nil || len(fresh) == 0 {
		t.Fatalf("nothing generated: %v", err)
	}
	committed, _ := filepath.Glob("*.pb.go")
	if len(committed) != len(fresh) {
		t.Errorf("%d generated files, %d committed", len(fresh), len(committed))
	}
	for _, f := range fresh {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Base(f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./plugins/...", filepath.Base(f))
		}
	}
}
