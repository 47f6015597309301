// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// Reading the report's page as a browser would: its elements, their
// classes (the colours), their tooltips and their text.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// element is one element of a page.
type element struct{ n *html.Node }

func (e element) attr(key string) string {
	for _, a := range e.n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func (e element) hasClass(c string) bool {
	for _, k := range strings.Fields(e.attr("class")) {
		if k == c {
			return true
		}
	}
	return false
}

func (e element) text() string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			// Cells and blocks are apart on the screen.
			if c.Type == html.ElementNode && c.Data != "b" && c.Data != "span" {
				b.WriteString(" ")
			}
			walk(c)
		}
	}
	walk(e.n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// all is every element under e that match says.
func (e element) all(match func(element) bool) []element {
	var out []element
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(element{n}) {
			out = append(out, element{n})
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(e.n)
	return out
}

// section is the elements between the h2 whose text is title and the
// next h2, as one element.
func (e element) section(t *testing.T, title string) element {
	t.Helper()
	for _, h := range e.all(func(x element) bool { return x.n.Data == "h2" }) {
		if h.text() != title {
			continue
		}
		div := &html.Node{Type: html.ElementNode, Data: "div"}
		for n := h.n.NextSibling; n != nil; n = n.NextSibling {
			if n.Type == html.ElementNode && n.Data == "h2" {
				break
			}
			clone := *n
			clone.Parent, clone.PrevSibling, clone.NextSibling = nil, nil, nil
			div.AppendChild(&clone)
		}
		return element{div}
	}
	t.Fatalf("the page has no section %q", title)
	return element{}
}

// parsePage parses the report's page, which must need no script and fetch
// nothing.
func parsePage(t *testing.T, page []byte) element {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	root := element{doc}
	for _, e := range root.all(func(x element) bool {
		return x.n.Data == "script" || x.n.Data == "link" || x.n.Data == "img" || x.attr("src") != ""
	}) {
		t.Errorf("the page loads something: <%s %v>", e.n.Data, e.n.Attr)
	}
	return root
}

// portCell is the fabric picture's cell of node/port.
func portCell(t *testing.T, page element, port string) element {
	t.Helper()
	cells := page.all(func(x element) bool {
		return x.n.Data == "span" && x.hasClass("c") && strings.HasPrefix(x.attr("title"), port+" ")
	})
	if len(cells) != 1 {
		t.Fatalf("%d cells of %s in the picture", len(cells), port)
	}
	return cells[0]
}

// writeResult writes a result (a decoded document) for -f.
func writeResult(t *testing.T, doc any) string {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// decoded is a recorded result as a document to change.
func decoded(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// reportDoc is the report's JSON (--json) as a script that gates on it
// reads it.
type reportDoc struct {
	Verdict       string `json:"verdict"`
	ExitCode      int    `json:"exitCode"`
	Summary       string `json:"summary"`
	StageVerdicts []struct {
		Stage, Verdict, Summary string
	} `json:"stageVerdicts"`
	Thresholds []struct {
		Kind, Drivers, MaxRTTP99, Flag, Meaning string
		Ports                                   int
	} `json:"thresholds"`
	Rails, Leaves []struct {
		Rail, Leaf, Verdict string
		Suspects            []string
	}
	Fabric []struct {
		Rail   string
		Matrix struct{ Full bool }
	} `json:"fabric"`
	NotTested []string `json:"notTested"`
	Suspects  []struct {
		Suspect, Kind string
		Explains      int      `json:"failuresExplained"`
		Failures      []string `json:"failures"`
	} `json:"suspects"`
	UnexplainedTotal int `json:"unexplainedFailuresTotal"`
	ExplainedTotal   int `json:"explainedFailuresTotal"`
	Links            []struct {
		From, To, Figure, Verdict, State string
		Pass                             bool
	} `json:"links"`
	NotMeasured []string `json:"notMeasured"`
	Labels      string   `json:"labels"`
}

// report runs diag report on the files with args; the exit code, the
// report and the page.
func report(t *testing.T, args []string, files ...string) (int, reportDoc, element) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	argv := []string{"diag", "report", "--json", "-", "--html", page}
	for _, f := range files {
		argv = append(argv, "-f", f)
	}
	r := run(t, newFakeClient(t), nil, append(argv, args...)...)
	var rep reportDoc
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("exit %d, no report: %v\n%s", r.code, err, r.stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return r.code, rep, parsePage(t, data)
}
