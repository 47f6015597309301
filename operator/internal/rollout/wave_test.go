// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"fmt"
	"slices"
	"testing"
)

// fabric is n nodes, groups of perLeaf cabled to the same leaf of each of
// rails rails (a rail-optimised fabric: node i on leaf r<rail>-l<i/perLeaf>).
func fabric(n, perLeaf, rails int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{Name: fmt.Sprintf("n%03d", i), Ready: true}
		for r := range rails {
			nodes[i].Leaves = append(nodes[i].Leaves, fmt.Sprintf("r%d-l%d", r, i/perLeaf))
		}
	}
	return nodes
}

// rollOut replaces waves until every node is updated, each wave's nodes
// coming back before the next is asked for; it checks every wave against
// the limits and returns the waves.
func rollOut(t *testing.T, nodes []Node, limits Limits) [][]string {
	t.Helper()
	var waves [][]string
	for range len(nodes) + 1 {
		w := Next(nodes, limits)
		if len(w.Nodes) == 0 {
			break
		}
		if len(w.Nodes) > limits.MaxUnavailable {
			t.Fatalf("wave %d: %d nodes, more than %d", len(waves), len(w.Nodes), limits.MaxUnavailable)
		}
		perLeaf := map[string]int{}
		for i := range nodes {
			if !slices.Contains(w.Nodes, nodes[i].Name) {
				continue
			}
			if nodes[i].Updated {
				t.Fatalf("wave %d replaces %s again", len(waves), nodes[i].Name)
			}
			for _, l := range nodes[i].Leaves {
				if perLeaf[l]++; perLeaf[l] > limits.MaxPerLeaf {
					t.Fatalf("wave %d: %d nodes of leaf %s, more than %d", len(waves), perLeaf[l], l, limits.MaxPerLeaf)
				}
			}
			nodes[i].Updated, nodes[i].Ready = true, true
		}
		waves = append(waves, w.Nodes)
	}
	for _, n := range nodes {
		if !n.Updated {
			t.Fatalf("%s never updated after %d waves", n.Name, len(waves))
		}
	}
	return waves
}

// 64 nodes, 8 to a leaf, 2 rails: a wave of 10 % (6 nodes) and one node
// of a leaf takes 6 nodes of 6 different leaf pairs; every node goes in
// 11 waves, and no wave takes two nodes of one leaf.
func TestWavesFollowTheLeaves(t *testing.T) {
	nodes := fabric(64, 8, 2)
	limits := Limits{MaxUnavailable: MaxUnavailable(0, 10, true, 64), MaxPerLeaf: 1}
	if limits.MaxUnavailable != 6 {
		t.Fatalf("10%% of 64 nodes: %d, want 6", limits.MaxUnavailable)
	}
	waves := rollOut(t, nodes, limits)
	if len(waves) != 11 || len(waves[0]) != 6 || fmt.Sprint(waves[0]) != "[n000 n008 n016 n024 n032 n040]" {
		t.Errorf("%d waves, the first %v", len(waves), waves[0])
	}
	// Two of a leaf at a time: 6 still, now from three leaf pairs.
	nodes = fabric(64, 8, 2)
	waves = rollOut(t, nodes, Limits{MaxUnavailable: 6, MaxPerLeaf: 2})
	if fmt.Sprint(waves[0]) != "[n000 n001 n008 n009 n016 n017]" || len(waves) != 11 {
		t.Errorf("two a leaf: %d waves, the first %v", len(waves), waves[0])
	}
	// Nodes whose ports were never heard have no leaf: the budget alone.
	nodes = fabric(5, 1, 0)
	if waves := rollOut(t, nodes, Limits{MaxUnavailable: 2, MaxPerLeaf: 1}); len(waves) != 3 {
		t.Errorf("5 nodes without leaves, 2 at a time: %d waves", len(waves))
	}
}

// The next wave waits for the last to come back, and says for whom.
func TestAWaveWaitsForTheLastToComeBack(t *testing.T) {
	nodes := fabric(16, 4, 2)
	w := Next(nodes, Limits{MaxUnavailable: 4, MaxPerLeaf: 1})
	if fmt.Sprint(w.Nodes) != "[n000 n004 n008 n012]" {
		t.Fatalf("the first wave %v", w.Nodes)
	}
	for i := range nodes {
		if slices.Contains(w.Nodes, nodes[i].Name) {
			nodes[i].Updated = true
			nodes[i].Ready = nodes[i].Name != "n008"
		}
	}
	if w := Next(nodes, Limits{MaxUnavailable: 4, MaxPerLeaf: 1}); len(w.Nodes) != 0 || w.Held != "waiting for n008 to come back" {
		t.Errorf("with n008 not back: %+v", w)
	}
}

// Nodes already down count against the budget: with two old nodes not
// ready and a budget of 3, a wave replaces those two (it costs nothing
// more) and one ready node; with four down, only the down ones.
func TestNodesAlreadyDownSpendTheBudget(t *testing.T) {
	nodes := fabric(8, 1, 1)
	nodes[5].Ready, nodes[6].Ready = false, false
	w := Next(nodes, Limits{MaxUnavailable: 3, MaxPerLeaf: 1})
	if fmt.Sprint(w.Nodes) != "[n005 n006 n000]" || w.Held != "at most 3 nodes unavailable at once" {
		t.Errorf("two down, a budget of 3: %+v", w)
	}
	nodes[1].Ready, nodes[2].Ready = false, false
	if w := Next(nodes, Limits{MaxUnavailable: 3, MaxPerLeaf: 1}); fmt.Sprint(w.Nodes) != "[n001 n002 n005 n006]" {
		t.Errorf("four down, a budget of 3: %+v", w)
	}
}

// A wave held back by the leaves says which nodes wait, and for which leaf.
func TestAWaveHeldByALeafSaysSo(t *testing.T) {
	nodes := fabric(3, 3, 1)
	w := Next(nodes, Limits{MaxUnavailable: 3, MaxPerLeaf: 1})
	if fmt.Sprint(w.Nodes) != "[n000]" ||
		w.Held != "at most 1 nodes of a leaf switch in a wave: n001 (leaf r0-l0), n002 (leaf r0-l0) wait" {
		t.Errorf("three nodes of one leaf: %+v", w)
	}
	if w := Next(nil, Limits{MaxUnavailable: 1, MaxPerLeaf: 1}); len(w.Nodes) != 0 || w.Held != "" {
		t.Errorf("no node: %+v", w)
	}
}

// A node whose new pod is not made yet is passed over: the wave takes
// another of its leaf instead of holding the leaf's place for it.
func TestAWavePassesOverANodeWithoutItsNewPod(t *testing.T) {
	nodes := fabric(4, 2, 1)
	nodes[0].Unmade = true
	w := Next(nodes, Limits{MaxUnavailable: 4, MaxPerLeaf: 1})
	if fmt.Sprint(w.Nodes) != "[n001 n002]" {
		t.Errorf("n000's pod not made: the wave %v, want n001 and n002 (one of each leaf)", w.Nodes)
	}
}

// A share rounds down and is at least one node; a number is itself.
func TestMaxUnavailable(t *testing.T) {
	for _, c := range []struct {
		number, share, nodes, want int
		isShare                    bool
	}{
		{0, 10, 512, 51, true}, {0, 10, 5, 1, true}, {0, 100, 7, 7, true}, {3, 0, 512, 3, false}, {0, 0, 9, 1, false},
	} {
		if got := MaxUnavailable(c.number, c.share, c.isShare, c.nodes); got != c.want {
			t.Errorf("%+v: %d", c, got)
		}
	}
}
