// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stageRecorded is a result the real daemons printed
// (operator/internal/stageresult/testdata/README.md says how).
func stageRecorded(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("..", "..", "internal", "stageresult", "testdata", name)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// One report of reach, the RDMA stage over real verbs and an all-reduce:
// every stage in it, the links against their line rate, the rings; then
// the same judged against a baseline whose figures were higher.
func TestAReportOfEveryStageAgainstItsLineRateAndABaseline(t *testing.T) {
	dir := t.TempDir()
	reach := filepath.Join(dir, "reach.json")
	if err := os.WriteFile(reach, recorded(t), 0o644); err != nil {
		t.Fatal(err)
	}
	rdma := stageRecorded(t, "rdma-2-vms-rxe-write-bw.json")
	allreduce := stageRecorded(t, "allreduce-4-nodes.json")
	r := run(t, newFakeClient(t), nil, "diag", "report", "-f", rdma, "-f", allreduce, "--json", "-")
	if r.code != ExitOK || r.connected {
		t.Fatalf("exit %d, want a pass without the cluster: %s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Stages, ",") != "rdma,allreduce" || len(rep.Links) != 2 || len(rep.Collective) != 2 {
		t.Fatalf("stages %q, %d links, %d rings", rep.Stages, len(rep.Links), len(rep.Collective))
	}
	ab := rep.Links[0]
	if ab.From != "a/eth0" || ab.To != "b/eth0" || ab.Tool != "ib_write_bw" || ab.Figure != "140 Mb/s" ||
		ab.LineRate != "1 Gb/s" || ab.Share != "14%" || !ab.Pass {
		t.Errorf("a -> b: %+v", ab)
	}
	if rep.Collective[0].Size != "1 MiB" || !rep.Collective[0].Pass {
		t.Errorf("ring %+v", rep.Collective[0])
	}

	// The baseline: this report with every figure doubled.
	base := rep
	base.Links = append([]LinkRow(nil), rep.Links...)
	base.Collective = append([]RailRow(nil), rep.Collective...)
	base.Links[1].BitsPerSecond *= 2
	base.Collective[0].BytesPerSecs *= 2
	data, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(dir, "baseline.json")
	if err := os.WriteFile(baseline, data, 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	r = run(t, newFakeClient(t), nil, "diag", "report", "-f", reach, "-f", rdma, "-f", allreduce,
		"--baseline", baseline, "--json", "-", "--html", page)
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want %d: %s", r.code, ExitFailed, r.stderr)
	}
	rep = Report{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Stages, ",") != "reach,rdma,allreduce" || rep.MinFraction != DefaultMinFraction {
		t.Errorf("stages %q, min fraction %g", rep.Stages, rep.MinFraction)
	}
	if !rep.Links[0].Pass || rep.Links[1].Pass || rep.Links[1].Verdict != "below 0.9 of the baseline 220 Mb/s" {
		t.Errorf("links %+v", rep.Links)
	}
	if rep.Collective[0].Pass || !strings.HasPrefix(rep.Collective[0].Verdict, "below 0.9 of the baseline") ||
		!rep.Collective[1].Pass {
		t.Errorf("rings %+v", rep.Collective)
	}
	if !strings.Contains(rep.Summary, "rdma: 1 of 2 figures failed.") {
		t.Errorf("summary %q", rep.Summary)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Links against the line rate", "a/eth0 &rarr; b/eth0", "All-reduce rings",
		"below 0.9 of the baseline 220 Mb/s", "Leaves", "stages</th><td>reach, rdma, allreduce"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A bisection's runs and conclusion are in the report; its slow node fails
// it.
func TestAReportOfABisection(t *testing.T) {
	r := run(t, newFakeClient(t), nil, "diag", "report", "-f",
		stageRecorded(t, "allreduce-4-nodes-bisect-slow.json"), "--json", "-")
	if r.code != ExitFailed {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Bisection) != 6 || strings.Join(rep.SlowNodes, ",") != "n2" ||
		!strings.HasPrefix(rep.Conclusion, "n2 makes the all-reduce slow") ||
		!strings.Contains(rep.Summary, "allreduce: n2 makes") || rep.Labels != "validation removed from n2" {
		t.Errorf("%+v", rep)
	}
}

func TestAReportRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rdma := stageRecorded(t, "rdma-2-vms-rxe-write-bw.json")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-f", junk}, ExitError, "not rocectl's JSON result of diag reach, rdma, allreduce or bandwidth"},
		{[]string{"-f", rdma, "-f", rdma}, ExitError, "a second result of rdma"},
		{[]string{"-f", rdma, "--baseline", junk}, ExitError, "not a report's JSON: no verdict"},
		{[]string{"-f", rdma, "--min-fraction", "1.5"}, ExitUsage, "--min-fraction 1.5"},
	} {
		r := run(t, newFakeClient(t), nil, append([]string{"diag", "report", "--json", "-"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, want %d and %q: %s", c.args, r.code, c.code, c.want, r.stderr)
		}
	}
}

// The counters that moved during each stage's run are listed under the
// report, with the stage they moved in, and so are the nodes not read.
func TestTheReportListsTheCountersThatMovedInEachStage(t *testing.T) {
	var rdma map[string]any
	data, err := os.ReadFile(stageRecorded(t, "rdma-2-vms-rxe-write-bw.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rdma); err != nil {
		t.Fatal(err)
	}
	rdma["counters"] = map[string]any{
		"nodes_read": 1,
		"changes": []any{map[string]any{"node": "a", "port": "eth0",
			"counter": "transport.duplicate_request", "increase": "903"}},
		"unread": []any{"b: rocenetd ListPorts: connection refused"},
	}
	path := filepath.Join(t.TempDir(), "rdma.json")
	out, _ := json.Marshal(rdma)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	r := run(t, newFakeClient(t), nil, "diag", "report", "-f", path, "--json", "-", "--html", html)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := CounterRow{Stage: "rdma", Node: "a", Port: "eth0", Counter: "transport.duplicate_request",
		Increase: "903"}
	if len(rep.Counters) != 1 || rep.Counters[0] != want {
		t.Errorf("counters %+v, want %+v", rep.Counters, want)
	}
	if strings.Join(rep.CountersUnread, "|") != "rdma: b: rocenetd ListPorts: connection refused" {
		t.Errorf("unread %q", rep.CountersUnread)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<td>rdma</td><td>a</td><td>eth0</td><td>transport.duplicate_request</td><td>903</td>") {
		t.Errorf("the page has no row of the counter:\n%s", page)
	}
}
