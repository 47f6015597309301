// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"strings"
	"testing"
)

// The recorded 8-node run with node-5's rail-1 cable cut, as a user opens
// its page: the cut port's cell is red, marked a suspect and names it; its
// peers, which lost probes only to it, are not failed; rail 0 is all green.
func TestThePictureShowsTheCutPortRedAndNamesIt(t *testing.T) {
	path := writeResult(t, decoded(t, recorded(t)))
	code, rep, page := report(t, nil, path)
	if code != ExitFailed || rep.Verdict != "FAIL" {
		t.Fatalf("exit %d, verdict %s", code, rep.Verdict)
	}
	cut := portCell(t, page, "node-5/so1")
	if !cut.hasClass("fail") || !cut.hasClass("suspect") || cut.text() != "node-5" ||
		!strings.Contains(cut.attr("title"), "none of 5 probes from and to it answered") {
		t.Errorf("node-5/so1's cell: class %q, text %q, title %q", cut.attr("class"), cut.text(), cut.attr("title"))
	}
	for _, peer := range []string{"node-2/so1", "node-4/so1", "node-0/so1", "node-6/so1"} {
		c := portCell(t, page, peer)
		if !c.hasClass("affected") || !strings.Contains(c.attr("title"), "lost probes only to or from node-5/so1") {
			t.Errorf("%s, which lost probes only to the cut port: class %q, title %q", peer, c.attr("class"), c.attr("title"))
		}
	}
	for i := 0; i < 8; i++ {
		port := "node-" + string(rune('0'+i)) + "/so0"
		if c := portCell(t, page, port); !c.hasClass("pass") {
			t.Errorf("%s on the healthy rail: class %q, title %q", port, c.attr("class"), c.attr("title"))
		}
	}
	// The rail of the cut holds a suspect and nothing unexplained; the
	// other rail passed.
	for _, g := range rep.Rails {
		want := map[string]string{"10.201.0.0/16": "pass", "10.202.0.0/16": "suspect"}[g.Rail]
		if g.Verdict != want || (want == "suspect" && strings.Join(g.Suspects, ",") != "node-5/so1") {
			t.Errorf("rail %s: %s %q, want %s", g.Rail, g.Verdict, g.Suspects, want)
		}
	}
	leaves := page.all(func(e element) bool { return e.hasClass("leaf") })
	if len(leaves) != 2 || !leaves[0].hasClass("l-pass") || !leaves[1].hasClass("l-suspect") ||
		!strings.Contains(leaves[1].text(), "leaf-fx-r1 8 ports: suspect (node-5/so1)") {
		for _, l := range leaves {
			t.Errorf("leaf %q: %q", l.attr("class"), l.text())
		}
	}
}

// Every failed probe of the recorded run is the cut port's: all five set
// under it, none among those nothing explains. A probe between two healthy
// ports that failed is the other way round, and fails their leaf.
func TestFailuresTheSuspectsExplainAreSetApartFromTheOthers(t *testing.T) {
	doc := decoded(t, recorded(t))
	_, rep, page := report(t, nil, writeResult(t, doc))
	if len(rep.Suspects) != 1 || rep.Suspects[0].Explains != 5 || len(rep.Suspects[0].Failures) != 5 ||
		rep.UnexplainedTotal != 0 || rep.ExplainedTotal != 5 {
		t.Fatalf("suspects %+v, %d unexplained", rep.Suspects, rep.UnexplainedTotal)
	}
	explained := page.section(t, "Failures the suspects explain")
	if !strings.Contains(explained.text(), "node-5/so1 (port, rail 10.202.0.0/16): none of 5 probes") ||
		!strings.Contains(explained.text(), "It explains 5 failed or lossy probes") ||
		!strings.Contains(explained.text(), "node-2/so1 -> node-5/so1 (10.202.6.1): 3 echoes, no reply") {
		t.Errorf("explained: %s", explained.text())
	}
	if got := page.section(t, "Failures nothing explains").text(); got != "None: the suspects explain every failure." {
		t.Errorf("unexplained: %q", got)
	}

	// node-1/so0 -> node-3/so0 on the healthy rail, unreachable.
	doc["unreachable"] = append(doc["unreachable"].([]any), map[string]any{"from_node": "node-1", "from_port": "so0",
		"to_node": "node-3", "to_port": "so0", "to_address": "10.201.4.1", "reason": "3 echoes, no reply"})
	code, rep, page := report(t, nil, writeResult(t, doc))
	if code != ExitFailed || rep.UnexplainedTotal != 1 || rep.Suspects[0].Explains != 5 {
		t.Fatalf("exit %d, %d unexplained, suspect %+v", code, rep.UnexplainedTotal, rep.Suspects[0])
	}
	unexplained := page.section(t, "Failures nothing explains").text()
	if !strings.Contains(unexplained, "node-1/so0 -> node-3/so0 (10.201.4.1): 3 echoes, no reply") ||
		strings.Contains(unexplained, "node-5") {
		t.Errorf("unexplained: %s", unexplained)
	}
	for _, port := range []string{"node-1/so0", "node-3/so0"} {
		if c := portCell(t, page, port); !c.hasClass("fail") || c.hasClass("suspect") {
			t.Errorf("%s: class %q", port, c.attr("class"))
		}
	}
	for _, g := range rep.Leaves {
		if want := map[string]string{"leaf-fx-r0": "fail", "leaf-fx-r1": "suspect"}[g.Leaf]; g.Verdict != want {
			t.Errorf("leaf %s: %s, want %s", g.Leaf, g.Verdict, want)
		}
	}
}

// A suspect of a kind the report has never seen is read by the fields it
// fills: a lossy port (node and port) accounts for the echoes its peers
// lost to it, and is amber, not red.
func TestASuspectOfANewKindIsReadByItsFields(t *testing.T) {
	doc := decoded(t, recorded(t))
	doc["unreachable"], doc["ok"] = []any{}, false
	ports := doc["ports"].([]any)
	for _, p := range ports {
		port := p.(map[string]any)
		if port["port"] != "so0" {
			continue
		}
		if port["node"] == "node-3" {
			continue
		}
		port["targets"] = append(port["targets"].([]any), map[string]any{"kind": "peer", "node": "node-3",
			"port": "so0", "address": "10.201.4.1", "sent": 3, "received": 2, "loss_ratio": 0.3333,
			"reachable": true, "rtt_p50_seconds": 2e-5, "rtt_p99_seconds": 3e-5})
	}
	doc["suspects"] = []any{"node-3/so0"}
	doc["suspect_details"] = []any{map[string]any{"kind": "lossy-port", "node": "node-3", "port": "so0",
		"rail": "10.201.0.0/16", "leaf": "leaf-fx-r0", "evidence": "its 7 peers lost 33% of their echoes to it",
		"loss_ratio": 0.33}}
	code, rep, page := report(t, nil, writeResult(t, doc))
	if code != ExitFailed || rep.UnexplainedTotal != 0 || rep.Suspects[0].Explains != 7 {
		t.Fatalf("exit %d, %d unexplained, suspects %+v", code, rep.UnexplainedTotal, rep.Suspects)
	}
	if c := portCell(t, page, "node-3/so0"); !c.hasClass("loss") || !c.hasClass("suspect") {
		t.Errorf("the lossy port: class %q", c.attr("class"))
	}
	if c := portCell(t, page, "node-0/so0"); !c.hasClass("affected") {
		t.Errorf("a peer of the lossy port: class %q, title %q", c.attr("class"), c.attr("title"))
	}
}
