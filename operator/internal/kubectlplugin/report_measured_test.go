// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"os"
	"strings"
	"testing"
)

// exitNotMeasured is diag report's exit code when what was measured passed
// but not everything was (docs/fleet.md).
const exitNotMeasured = 8

// The recorded RDMA stage on veths: every link skipped (no RDMA device).
// Nothing was measured, so nothing passed: the verdict is NOT MEASURED
// with its own exit code, and no link is counted or shown as passed.
func TestAStageThatMeasuredNothingIsNotMeasured(t *testing.T) {
	code, rep, page := report(t, nil, stageRecorded(t, "rdma-4-nodes.json"))
	if code != exitNotMeasured || rep.Verdict != "NOT MEASURED" {
		t.Fatalf("exit %d, verdict %s: %s", code, rep.Verdict, rep.Summary)
	}
	if !strings.HasPrefix(rep.Summary, "rdma: nothing measured: every link was skipped (") {
		t.Errorf("summary %q", rep.Summary)
	}
	if len(rep.Links) != 8 {
		t.Fatalf("%d links", len(rep.Links))
	}
	for _, l := range rep.Links {
		if l.Pass || l.State != "not-measured" || !strings.HasPrefix(l.Verdict, "not measured: ") || l.Figure != "-" {
			t.Errorf("link %s -> %s: %+v", l.From, l.To, l)
		}
	}
	if len(rep.NotMeasured) == 0 || !strings.Contains(rep.NotMeasured[0], "links skipped") {
		t.Errorf("not measured: %q", rep.NotMeasured)
	}
	banner := page.all(func(e element) bool { return e.hasClass("verdict") })
	if len(banner) != 1 || banner[0].text() != "NOT MEASURED" || banner[0].hasClass("v-pass") {
		t.Errorf("the banner: %+v", banner)
	}
	links := page.section(t, "Links against the line rate")
	passed := links.all(func(e element) bool { return e.n.Data == "td" && e.hasClass("pass") })
	notMeasured := links.all(func(e element) bool { return e.n.Data == "td" && e.hasClass("not-measured") })
	if len(passed) != 0 || len(notMeasured) != 8 || !strings.HasPrefix(notMeasured[0].text(), "not measured: ") {
		t.Errorf("%d links shown passed, %d not measured", len(passed), len(notMeasured))
	}
}

// Of two real verbs links one skipped: what was measured passed, the rest
// was not measured; the report is INCOMPLETE, not PASS, names the node
// without a measured link, and says the label's claim goes beyond it.
func TestAStageThatMeasuredSomeLinksIsIncomplete(t *testing.T) {
	data, err := os.ReadFile(stageRecorded(t, "rdma-2-vms-rxe-write-bw.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := decoded(t, data)
	links := doc["links"].([]any)
	skipped := links[1].(map[string]any)
	skipped["skipped"], skipped["bits_per_second"], skipped["fraction_of_link"] = "a: no RDMA device on eth0", 0, 0
	doc["nodes"] = []any{"a", "b", "c"}
	doc["labels"] = map[string]any{"validated": 3}
	code, rep, _ := report(t, nil, writeResult(t, doc))
	if code != exitNotMeasured || rep.Verdict != "INCOMPLETE" {
		t.Fatalf("exit %d, verdict %s: %s", code, rep.Verdict, rep.Summary)
	}
	if !rep.Links[0].Pass || rep.Links[1].Pass || rep.Links[1].State != "not-measured" {
		t.Errorf("links %+v", rep.Links)
	}
	if !strings.Contains(rep.Summary, "rdma: 1 of 2 figures measured, all within the line rate; 1 not measured (a: no RDMA device on eth0).") ||
		!strings.Contains(rep.Summary, "Not measured: c.") {
		t.Errorf("summary %q", rep.Summary)
	}
	if rep.Labels != "rdma validated on 3 nodes, though only 2 nodes have a measured link: the others were not measured" {
		t.Errorf("labels %q", rep.Labels)
	}
}

// A reach that passed beside an RDMA stage that measured nothing: every
// stage that measured passed, which the report says without saying PASS.
func TestAReportWhoseOtherStagesPassedButOneMeasuredNothing(t *testing.T) {
	healthy := decoded(t, recorded(t))
	healthy["unreachable"], healthy["suspects"], healthy["suspect_details"], healthy["ok"] = []any{}, []any{}, []any{}, true
	healthy["labels"] = map[string]any{"validated": 8}
	for _, p := range healthy["ports"].([]any) {
		port := p.(map[string]any)
		port["error"], port["peers_failed"], port["peer_loss_ratio"] = "", 0, 0
		for _, t := range port["targets"].([]any) {
			target := t.(map[string]any)
			target["reachable"], target["loss_ratio"], target["error"] = true, 0, ""
		}
	}
	code, rep, page := report(t, nil, writeResult(t, healthy), stageRecorded(t, "rdma-4-nodes.json"))
	if code != exitNotMeasured || rep.Verdict != "INCOMPLETE" {
		t.Fatalf("exit %d, verdict %s: %s", code, rep.Verdict, rep.Summary)
	}
	stages := map[string]string{}
	for _, s := range rep.StageVerdicts {
		stages[s.Stage] = s.Verdict
	}
	if stages["reach"] != "PASS" || stages["rdma"] != "NOT MEASURED" {
		t.Errorf("stages %v", stages)
	}
	if !strings.Contains(rep.Summary, "reach: every port of 8 nodes") || !strings.Contains(rep.Summary, "rdma: nothing measured") {
		t.Errorf("summary %q", rep.Summary)
	}
	badges := page.all(func(e element) bool { return e.hasClass("badge") })
	if len(badges) != 2 || badges[0].text() != "PASS" || badges[1].text() != "NOT MEASURED" {
		t.Errorf("%d badges", len(badges))
	}
}

// Nodes the reach could not test, in either form of the result's list and
// as a node the result names with no port: grey in the picture, listed,
// not counted as passed, and the verdict INCOMPLETE. (The recorded run
// with node-5's ports taken out and the list added, as a newer rocectl
// prints it.)
func TestNodesNotTestedAreNeitherPassedNorFailed(t *testing.T) {
	for _, form := range []any{
		[]any{"node-5: rocenet-diagd did not answer at 10.201.6.1, 10.202.6.1"},
		[]any{map[string]any{"node": "node-5", "reason": "rocenet-diagd did not answer at 10.201.6.1, 10.202.6.1", "addresses": []any{"10.201.6.1"}}},
		nil, // a result from before the list: node-5 named, none of its ports in it
	} {
		doc := decoded(t, recorded(t))
		doc["unreachable"], doc["suspects"], doc["suspect_details"] = []any{}, []any{}, []any{}
		doc["ok"], doc["labels"] = false, map[string]any{"validated": 7}
		var ports []any
		for _, p := range doc["ports"].([]any) {
			port := p.(map[string]any)
			if port["node"] == "node-5" {
				continue
			}
			port["error"], port["peers_failed"], port["peer_loss_ratio"] = "", 0, 0
			var kept []any
			for _, t := range port["targets"].([]any) {
				if t.(map[string]any)["kind"] == "gateway" {
					kept = append(kept, t)
				}
			}
			port["targets"] = kept
			ports = append(ports, port)
		}
		doc["ports"] = ports
		if form != nil {
			doc["not_tested"] = form
		}
		code, rep, page := report(t, nil, writeResult(t, doc))
		if code != exitNotMeasured || rep.Verdict != "INCOMPLETE" {
			t.Errorf("%v: exit %d, verdict %s: %s", form, code, rep.Verdict, rep.Summary)
			continue
		}
		want := "node-5: rocenet-diagd did not answer at 10.201.6.1, 10.202.6.1"
		if form == nil {
			want = "node-5: no port of it is in the result"
		}
		if strings.Join(rep.NotTested, "|") != want {
			t.Errorf("%v: not tested %q", form, rep.NotTested)
		}
		if !strings.Contains(rep.Summary, "1 of 8 nodes not tested") {
			t.Errorf("%v: summary %q", form, rep.Summary)
		}
		grey := page.all(func(e element) bool { return e.hasClass("c") && e.hasClass("not-measured") && e.text() == "node-5" })
		green := page.all(func(e element) bool {
			return e.hasClass("c") && e.hasClass("pass") && strings.HasPrefix(e.text(), "node-5")
		})
		if len(grey) != 2 || len(green) != 0 {
			t.Errorf("%v: node-5 in %d grey cells (one a rail), %d green", form, len(grey), len(green))
		}
	}
}

// A Gaudi port's RTT is its driver's control path: held to its own
// threshold, which the report states with the drivers it applies to, and
// which a flag sets. (The recorded run with two nodes' ports described as
// Gaudi's and the others as ConnectX's: there is no Gaudi here.)
func TestThresholdsSuitTheKindOfPort(t *testing.T) {
	doc := decoded(t, recorded(t))
	for _, p := range doc["ports"].([]any) {
		port := p.(map[string]any)
		if port["node"] == "node-0" || port["node"] == "node-1" {
			port["driver"], port["netdev_is_control_path"] = "habanalabs_en", true
			port["peer_rtt_p99_seconds"] = 0.004
		} else {
			port["driver"] = "mlx5_core"
		}
		if port["node"] == "node-2" && port["port"] == "so0" {
			port["peer_rtt_p99_seconds"] = 0.004
		}
	}
	path := writeResult(t, doc)
	_, rep, page := report(t, nil, path)
	kinds := map[string]int{}
	for i, k := range rep.Thresholds {
		kinds[k.Kind] = i
	}
	if len(kinds) != 2 {
		t.Fatalf("thresholds %+v", rep.Thresholds)
	}
	if k := rep.Thresholds[kinds["control path"]]; k.Ports != 4 || k.Drivers != "habanalabs_en" || k.MaxRTTP99 != "10.00ms" ||
		k.Flag != "--max-rtt-control-path" || !strings.Contains(k.Meaning, "not RoCE's") {
		t.Errorf("control path: %+v", k)
	}
	if k := rep.Thresholds[kinds["data path"]]; k.Ports != 12 || k.Drivers != "mlx5_core" || k.MaxRTTP99 != "1.00ms" {
		t.Errorf("data path: %+v", k)
	}
	if c := portCell(t, page, "node-0/so0"); !c.hasClass("pass") {
		t.Errorf("a Gaudi port at 4 ms: class %q, title %q", c.attr("class"), c.attr("title"))
	}
	if c := portCell(t, page, "node-2/so0"); !c.hasClass("slow") ||
		!strings.Contains(c.attr("title"), "RTT p99 4.00ms, above the data path threshold 1.00ms") {
		t.Errorf("a RoCE NIC's port at 4 ms: class %q, title %q", c.attr("class"), c.attr("title"))
	}
	ran := page.section(t, "What ran").text()
	if !strings.Contains(ran, "control path 4 ports (driver habanalabs_en) at most 10.00ms (--max-rtt-control-path)") {
		t.Errorf("what ran: %s", ran)
	}

	_, _, page = report(t, []string{"--max-rtt-control-path", "2ms"}, path)
	if c := portCell(t, page, "node-0/so0"); !c.hasClass("slow") {
		t.Errorf("a Gaudi port at 4 ms, held to 2 ms: class %q", c.attr("class"))
	}
}
