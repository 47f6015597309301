// SPDX-License-Identifier: Apache-2.0

package reachresult

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The recorded run (tests/fixtures/diag/README.md) reads with its targets'
// owners and figures, and the fields a newer rocectl adds are read when
// there, in either form, and ignored when unknown.
func TestParseReadsTheRecordedRunAndWhatNewerResultsAdd(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "fixtures", "diag", "reach-rings-8-nodes-cut-cable.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var lost *Target
	for i := range r.Ports {
		for k := range r.Ports[i].Targets {
			if tg := &r.Ports[i].Targets[k]; r.Ports[i].Node == "node-2" && tg.Kind == "peer" {
				lost = tg
			}
		}
	}
	if lost == nil || lost.Node != "node-5" || lost.Port != "so1" || lost.Address != "10.202.6.1" ||
		lost.Sent != 3 || lost.Received != 0 || lost.LossRatio != 1 || lost.Reachable {
		t.Errorf("node-2's lost peer: %+v", lost)
	}
	if len(r.NotTested) != 0 || r.Ports[0].Driver != "" || r.Ports[0].NetdevIsControlPath {
		t.Errorf("fields the recorded run has not: %+v %+v", r.NotTested, r.Ports[0])
	}

	newer := []byte(`{"plan": {"kind": "mesh"}, "a_field_from_later": {"x": 1},
		"ports": [{"node": "n0", "port": "so0", "driver": "habanalabs_en", "netdev_is_control_path": true,
		           "mtu_probe": {"bytes": 9000}}],
		"not_tested": ["n3: rocenet-diagd did not answer at 10.201.4.1", "n4",
		               {"node": "n5", "reason": "unavailable", "addresses": ["10.201.6.1"]},
		               {"name": "n6", "evidence": "deadline exceeded"}]}`)
	r, err = Parse(newer)
	if err != nil {
		t.Fatal(err)
	}
	want := []NotTested{{"n3", "rocenet-diagd did not answer at 10.201.4.1"}, {"n4", ""}, {"n5", "unavailable"},
		{"n6", "deadline exceeded"}}
	if !reflect.DeepEqual(r.NotTested, want) {
		t.Errorf("not tested %+v, want %+v", r.NotTested, want)
	}
	if p := r.Ports[0]; p.Driver != "habanalabs_en" || !p.NetdevIsControlPath {
		t.Errorf("port %+v", p)
	}
	if _, err := Parse([]byte(`{"plan": {"kind": "mesh"}, "not_tested": [7]}`)); err == nil {
		t.Error("a not_tested entry that is neither a line nor a node was read")
	}
}
