// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twelveNodes is a recorded run of 12 nodes x 2 rails, 4 a leaf
// (tests/fixtures/diag/README.md): healthy-matrix.json, faults-matrix.json
// (n6/so0's cable cut, n7/so1 dead, rail 0's last leaf down) or faults.json
// (the same without --matrix).
func twelveNodes(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "tests", "fixtures", "diag", "reach-12-nodes", name)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// matrixOf is the page's leaf-to-leaf matrix of a rail: its rows' headers
// and cells.
func matrixOf(t *testing.T, page element, rail string) (rows []string, cells [][]element) {
	t.Helper()
	for _, h := range page.all(func(e element) bool { return e.n.Data == "h3" }) {
		if h.text() != "Rail "+rail {
			continue
		}
		for n := h.n.NextSibling; n != nil; n = n.NextSibling {
			e := element{n}
			if n.Data != "table" || !e.hasClass("matrix") {
				continue
			}
			for _, tr := range e.all(func(x element) bool { return x.n.Data == "tr" })[1:] {
				th := tr.all(func(x element) bool { return x.n.Data == "th" })
				td := tr.all(func(x element) bool { return x.n.Data == "td" })
				rows = append(rows, th[0].text())
				cells = append(cells, td[:len(td)-2]) // the last two: the row's RTT
			}
			return rows, cells
		}
	}
	t.Fatalf("no matrix of rail %s", rail)
	return nil, nil
}

// The rail with the leaf down, from a run with --matrix: the matrix holds
// the rail's three leaves in order; every cell to or from the dead leaf is
// red with all its probes unreachable, every cell between the others that
// the cut cable does not touch has an RTT and its shade.
func TestTheLeafMatrixOfARunWithEveryProbe(t *testing.T) {
	code, rep, page := report(t, []string{"--max-rtt", "50ms"}, twelveNodes(t, "faults-matrix.json"))
	if code != ExitInconclusive && code != ExitFailed {
		t.Fatalf("exit %d: %s", code, rep.Summary)
	}
	var dead string
	for _, s := range rep.Suspects {
		if s.Kind == "leaf" {
			dead = strings.TrimPrefix(s.Suspect, "leaf ")
		}
	}
	rows, cells := matrixOf(t, page, "10.201.0.0/16")
	if len(rows) != 3 || dead == "" || !strings.HasSuffix(dead, "-r0-l2") {
		t.Fatalf("rows %q, the dead leaf %q", rows, dead)
	}
	for i, r := range rows {
		if !strings.HasPrefix(r, fmt.Sprintf("%d leaf-", i+1)) || !strings.HasSuffix(r, fmt.Sprintf("-r0-l%d", i)) {
			t.Errorf("row %d: %q", i, r)
		}
	}
	for i := range rows {
		for k := range rows {
			c := cells[i][k]
			title := c.attr("title")
			switch {
			case i == 2 || k == 2:
				if !c.hasClass("fail") || !strings.HasSuffix(c.text(), "✗") ||
					!strings.Contains(title, "probes, "+strings.TrimSuffix(c.text(), "✗")+" unreachable") {
					t.Errorf("[%d][%d] to or from the dead leaf: class %q, %q, %q", i, k, c.attr("class"), c.text(), title)
				}
			case i == 1 || k == 1:
				// n6/so0 of leaf 1 is cut: those cells hold its lost probes.
				if !c.hasClass("fail") {
					t.Errorf("[%d][%d] with the cut port: class %q, %q", i, k, c.attr("class"), title)
				}
			default:
				if !strings.HasPrefix(c.attr("class"), "rtt") || !strings.HasSuffix(c.text(), "s") ||
					!strings.Contains(title, " 0 unreachable, 0 lost echoes") {
					t.Errorf("[%d][%d] healthy: class %q, %q, %q", i, k, c.attr("class"), c.text(), title)
				}
			}
		}
	}
	if !strings.Contains(page.text(), "Every probe is in the result (--matrix)") {
		t.Error("the page does not say the matrix holds every probe")
	}
}

// The same faults without --matrix: the result lists only the probes that
// lost an echo, so the cells count those, the others say nothing, and the
// page says so.
func TestTheLeafMatrixOfARunWithOnlyItsFailures(t *testing.T) {
	_, rep, page := report(t, []string{"--max-rtt", "50ms"}, twelveNodes(t, "faults.json"))
	for _, rail := range rep.Fabric {
		if rail.Matrix.Full {
			t.Errorf("rail %s: a matrix of every probe from a result without them", rail.Rail)
		}
	}
	rows, cells := matrixOf(t, page, "10.201.0.0/16")
	if len(rows) != 3 {
		t.Fatalf("rows %q", rows)
	}
	if c := cells[0][2]; !c.hasClass("fail") || c.text() != "16✗" {
		t.Errorf("leaf 0 -> the dead leaf, 4 x 4 probes: class %q, %q", c.attr("class"), c.text())
	}
	if c := cells[0][0]; !c.hasClass("none") || c.text() != "" ||
		!strings.Contains(c.attr("title"), "a result without --matrix lists no other") {
		t.Errorf("leaf 0 -> leaf 0: class %q, %q, %q", c.attr("class"), c.text(), c.attr("title"))
	}
	if !strings.Contains(page.text(), "The result lists only the probes that lost an echo") {
		t.Error("the page does not say what the matrix holds")
	}
}

// The healthy run: every port green, every cell of every matrix an RTT
// within the threshold, nothing not tested, and the verdict PASS.
func TestAHealthyRunIsGreenEverywhere(t *testing.T) {
	code, rep, page := report(t, []string{"--max-rtt", "50ms"}, twelveNodes(t, "healthy-matrix.json"))
	if code != ExitOK || rep.Verdict != "PASS" {
		t.Fatalf("exit %d, %s: %s", code, rep.Verdict, rep.Summary)
	}
	cells := page.all(func(e element) bool { return e.hasClass("c") && strings.Contains(e.attr("title"), "/so") })
	if len(cells) != 24 {
		t.Errorf("%d port cells, want 24", len(cells))
	}
	for _, c := range cells {
		if !c.hasClass("pass") {
			t.Errorf("%s: class %q", c.attr("title"), c.attr("class"))
		}
	}
	for _, rail := range []string{"10.201.0.0/16", "10.202.0.0/16"} {
		_, m := matrixOf(t, page, rail)
		for i := range m {
			for k := range m[i] {
				if !strings.HasPrefix(m[i][k].attr("class"), "rtt") {
					t.Errorf("rail %s [%d][%d]: class %q", rail, i, k, m[i][k].attr("class"))
				}
			}
		}
	}
}
