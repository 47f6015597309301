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

// The figures a report judges: a real rdma run over rxe between two VMs,
// each rail's ring at its largest size, both directions of a port pair.
func TestTheFiguresOfEachStage(t *testing.T) {
	r, err := Parse("rdma", recorded(t, "rdma-2-vms-rxe-write-bw.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != 2 {
		t.Fatalf("links %+v, want a -> b and b -> a", r.Links)
	}
	ab, ba := r.Links[0], r.Links[1]
	if ab.From != "a/eth0" || ab.To != "b/eth0" || ab.Tool != "ib_write_bw" || ab.BitsPerSecond != 140e6 ||
		ab.LinkBitsPerSecond != 1e9 || ab.FractionOfLink != 0.14 || ab.Rail != "10.200.0.0/16" || ab.Slowest {
		t.Errorf("a -> b %+v", ab)
	}
	if !ba.Slowest || ba.BitsPerSecond != 110e6 {
		t.Errorf("b -> a %+v, want the slowest at 110 Mb/s", ba)
	}
	a, err := Parse("allreduce", recorded(t, "allreduce-4-nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Rails) != 2 || a.Rails[0].Bytes != 1<<20 || a.Rails[0].BusBW <= 0 || a.Rails[0].Broken {
		t.Errorf("rails %+v, want 2 at 1 MiB", a.Rails)
	}
	b, err := Parse("bandwidth", recorded(t, "bandwidth-n0-to-n1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Links) != 4 || b.Links[0].From != "n0/so0" || b.Links[0].To != "10.201.2.1" ||
		b.Links[1].From != "10.201.2.1" || b.Links[1].To != "n0/so0" || b.Links[0].Tool != "tcp" ||
		b.Links[0].BitsPerSecond <= 0 || b.Links[0].LinkBitsPerSecond != 10e9 {
		t.Errorf("bandwidth %+v, want both directions of two pairs", b.Links)
	}
}

// The counters that moved during a run come with its result; a bandwidth
// stage's port pairs each bring theirs. (rocectl prints a uint64 as a
// string.)
func TestTheCountersThatMovedDuringEveryRunAreKept(t *testing.T) {
	data := []byte(`[
 {"node": "n0", "port": "so0", "peer": "10.201.2.1", "ok": true,
  "counters": {"changes": [{"node": "n1", "port": "so0", "counter": "transport.duplicate_request",
                            "increase": "903", "reset": false}],
               "nodes_read": 2, "unread": []}},
 {"node": "n0", "port": "so1", "peer": "10.202.2.1", "ok": true,
  "counters": {"changes": [{"node": "n0", "port": "so1", "counter": "fec.corrected_blocks",
                            "increase": "12", "reset": true}],
               "nodes_read": 1, "unread": ["10.202.2.1: connect: Connection refused"]}}
]`)
	r, err := Parse("bandwidth", data)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Counters
	if c.NodesRead != 3 || len(c.Changes) != 2 || len(c.Unread) != 1 {
		t.Fatalf("counters %+v", c)
	}
	if ch := c.Changes[0]; ch.Node != "n1" || ch.Counter != "transport.duplicate_request" ||
		ch.Increase.String() != "903" || ch.Reset {
		t.Errorf("first change %+v", ch)
	}
	if ch := c.Changes[1]; ch.Increase.String() != "12" || !ch.Reset {
		t.Errorf("second change %+v", ch)
	}
	// A result from before the counters has none, and is read as before.
	r, err = Parse("rdma", recorded(t, "rdma-4-nodes.json"))
	if err != nil || len(r.Counters.Changes) != 0 || r.Counters.NodesRead != 0 {
		t.Errorf("%v, counters %+v", err, r)
	}
}
