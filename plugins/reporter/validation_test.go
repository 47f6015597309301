// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadValidation(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	write := func(text string) string {
		path := filepath.Join(dir, "rocenet-validated")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	if v, err := ReadValidation(filepath.Join(dir, "none"), now); v != nil || err != nil {
		t.Errorf("no file: %+v, %v; want nothing", v, err)
	}
	passed := write("# +expiry-time=2026-12-05T10:00:00Z\n" +
		"# rocenet: rdma stage passed at 2026-12-04T10:00:00Z, coordinated by node-a\n" +
		"rocenet.io/scale-out-validated=rdma\n")
	v, err := ReadValidation(passed, now)
	if err != nil || v == nil || v.Stage != "rdma" || v.Time == nil ||
		!v.Time.Time.Equal(time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)) ||
		v.Message != "rdma stage passed at 2026-12-04T10:00:00Z, coordinated by node-a" {
		t.Errorf("passed: %+v, %v", v, err)
	}
	if v, err := ReadValidation(passed, now.Add(23*time.Hour)); v != nil || err != nil {
		t.Errorf("past its expiry: %+v, %v; want nothing, as NFD drops the label", v, err)
	}
	failed := write("# rocenet: ethernet stage failed at 2026-12-04T11:00:00Z, coordinated by node-a: node-b so3 -> node-c so3: 12% loss\n")
	v, err = ReadValidation(failed, now)
	if err != nil || v == nil || v.Stage != "" || v.Time == nil || v.Message == "" {
		t.Errorf("failed: %+v, %v; want no stage and the note", v, err)
	}
	if _, err := ReadValidation(write("# +expiry-time=tomorrow\nrocenet.io/scale-out-validated=reach\n"), now); err == nil {
		t.Error("a bad expiry-time read without error")
	}
}
