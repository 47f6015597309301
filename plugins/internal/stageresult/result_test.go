// SPDX-License-Identifier: Apache-2.0

package stageresult

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Every link skipped (no RDMA device on a veth) is a pass that says so.
func TestARecordedRdmaRunWithEveryLinkSkipped(t *testing.T) {
	r, err := Parse("rdma", recorded(t, "rdma-4-nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK || len(r.Problems) != 0 || len(r.Nodes) != 4 || r.Measured != 8 || r.Skipped != 8 {
		t.Errorf("%+v, want a pass over 4 nodes with 8 links, all skipped", r)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[len(r.Notes)-1], "every link was skipped") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestARecordedAllreduce(t *testing.T) {
	r, err := Parse("allreduce", recorded(t, "allreduce-4-nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK || r.Measured != 2 || len(r.SlowNodes) != 0 || r.Labels == nil || r.Labels.Validated != 4 {
		t.Errorf("%+v, want a pass over 2 rails, 4 nodes validated", r)
	}
}

// A bisection names the slow node, with the runs that found it.
func TestARecordedBisectionNamesTheSlowNode(t *testing.T) {
	r, err := Parse("allreduce", recorded(t, "allreduce-4-nodes-bisect-slow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.SlowNodes) != 1 || r.SlowNodes[0] != "n2" || len(r.Bisection) != 6 {
		t.Fatalf("%+v, want a failure naming n2 after 6 runs", r)
	}
	if !strings.HasPrefix(r.Problems[0], "bisection: n2 makes the all-reduce slow") || !strings.HasPrefix(r.Conclusion, "n2 makes") {
		t.Errorf("problems %q, conclusion %q", r.Problems, r.Conclusion)
	}
	pair := r.Bisection[4]
	if !pair.Pair || !pair.Slow || pair.Nodes[0] != "n2" || !strings.Contains(pair.Reason, "below 0.9") {
		t.Errorf("the slow pair %+v", pair)
	}
	if r.Labels == nil || len(r.Labels.Unvalidated) != 1 || r.Labels.Unvalidated[0] != "n2" {
		t.Errorf("labels %+v", r.Labels)
	}
}

// A result of before the bisection (no such fields) reads as none.
func TestAnAllreduceWithoutBisectionFields(t *testing.T) {
	r, err := Parse("allreduce", []byte(`{"nodes": ["a", "b"], "ok": true, "rails": [{}]}`))
	if err != nil || !r.OK || r.SlowNodes != nil || r.Bisection != nil || r.Labels != nil {
		t.Errorf("%+v, %v", r, err)
	}
}

func TestBandwidthPairsAreOneVerdict(t *testing.T) {
	r, err := Parse("bandwidth", recorded(t, "bandwidth-n0-to-n1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK || r.Measured != 2 || len(r.Nodes) != 1 || r.Nodes[0] != "n0" {
		t.Errorf("%+v, want 2 pairs from n0, passed", r)
	}
	r, err = Parse("bandwidth", []byte(`[{"ok": true, "problems": []}, {"ok": false, "problems": ["so1: 1.2 Gb/s, below 0.8 of the link"]}]`))
	if err != nil || r.OK || len(r.Problems) != 1 {
		t.Errorf("one pair failing: %+v, %v", r, err)
	}
}

func TestOutputThatIsNoResultIsAnError(t *testing.T) {
	for stage, texts := range map[string][]string{
		"rdma":      {"", "rocectl: cannot reach rocenet-diagd", `{"nodes": ["a"]}`},
		"allreduce": {"[", `{"problems": []}`},
		"bandwidth": {"[]", `[{"ok": true},`, `[{"node": "n0"}]`},
		"incast":    {`{"ok": true}`},
	} {
		for _, text := range texts {
			if _, err := Parse(stage, []byte(text)); err == nil {
				t.Errorf("%s %q: no error", stage, text)
			}
		}
	}
}
