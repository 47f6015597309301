// SPDX-License-Identifier: Apache-2.0

// Package rollout plans how a node policy's change reaches its nodes: in
// waves that follow the fabric. A wave takes at most MaxUnavailable nodes
// of the policy and at most MaxPerLeaf nodes cabled to any one leaf
// switch (a node of a rail-optimised fabric is cabled to one leaf per
// rail, and counts against each), and the next wave starts only when
// every node of the last is back.
package rollout

import (
	"fmt"
	"slices"
	"strings"
)

// Node is a node of the policy as a rollout sees it.
type Node struct {
	Name string
	// The leaf switches its ports are cabled to (from its RocenetNode's
	// LLDP); none when its ports have not been heard.
	Leaves []string
	// Its pod runs the policy's current revision.
	Updated bool
	// Its pod is ready and its node's rocenet is too (every port up and
	// addressed): it takes no part in the fabric's unavailability.
	Ready bool
	// Its new pod is not made yet (the DaemonSet controller makes them at
	// its own pace): a wave cannot take it now, and passes over it.
	Unmade bool
}

// Limits bound a wave.
type Limits struct {
	// The most nodes not ready at once, the wave's included (at least 1).
	MaxUnavailable int
	// The most nodes of a wave cabled to one leaf switch (at least 1).
	MaxPerLeaf int
}

// Wave is the next nodes to replace, and why no more.
type Wave struct {
	Nodes []string
	// Why the wave is smaller than the nodes left, or empty: "" when it
	// takes every node left.
	Held string
}

// Next is the next wave: the nodes whose pods to replace now, given the
// nodes' state. None while a node updated earlier is not back (the last
// wave is still coming back) or while the nodes not ready already take
// the whole budget; else the old nodes, each taken while the
// budget lasts and no leaf it is cabled to has MaxPerLeaf nodes in the
// wave, those of the fullest leaves first.
func Next(nodes []Node, limits Limits) Wave {
	maxUnavailable := max(limits.MaxUnavailable, 1)
	maxPerLeaf := max(limits.MaxPerLeaf, 1)
	var old []Node
	var coming []string
	notReady := 0
	for _, n := range nodes {
		if !n.Ready {
			notReady++
		}
		switch {
		case !n.Updated:
			old = append(old, n)
		case !n.Ready:
			coming = append(coming, n.Name)
		}
	}
	if len(old) == 0 {
		return Wave{}
	}
	if len(coming) > 0 {
		slices.Sort(coming)
		return Wave{Held: fmt.Sprintf("waiting for %s to come back", list(coming))}
	}
	// An old node that is not ready already counts against the budget;
	// replacing it costs nothing more, so those go first. Then the nodes
	// of the leaves with the most old nodes left: each leaf lets one wave
	// take only MaxPerLeaf of its nodes, so the fullest set the number of
	// waves left.
	left := map[string]int{}
	for _, n := range old {
		for _, leaf := range n.Leaves {
			left[leaf]++
		}
	}
	busiest := func(n Node) int {
		most := 0
		for _, leaf := range n.Leaves {
			most = max(most, left[leaf])
		}
		return most
	}
	slices.SortFunc(old, func(a, b Node) int {
		if a.Ready != b.Ready {
			if !a.Ready {
				return -1
			}
			return 1
		}
		if c := busiest(b) - busiest(a); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	budget := maxUnavailable - notReady
	perLeaf := map[string]int{}
	var wave Wave
	var leafHeld []string
	for _, n := range old {
		if n.Unmade {
			continue
		}
		if n.Ready && budget <= 0 {
			wave.Held = fmt.Sprintf("at most %d nodes unavailable at once", maxUnavailable)
			break
		}
		full := ""
		for _, leaf := range n.Leaves {
			if perLeaf[leaf] >= maxPerLeaf {
				full = leaf
				break
			}
		}
		if full != "" {
			leafHeld = append(leafHeld, fmt.Sprintf("%s (leaf %s)", n.Name, full))
			continue
		}
		for _, leaf := range n.Leaves {
			perLeaf[leaf]++
		}
		if n.Ready {
			budget--
		}
		wave.Nodes = append(wave.Nodes, n.Name)
	}
	if wave.Held == "" && len(leafHeld) > 0 {
		wave.Held = fmt.Sprintf("at most %d nodes of a leaf switch in a wave: %s wait", maxPerLeaf, list(leafHeld))
	}
	return wave
}

// MaxUnavailable is a wave's bound from the policy's number or share of
// its nodes: a share rounds down, and is at least 1.
func MaxUnavailable(number int, share int, isShare bool, nodes int) int {
	if !isShare {
		return max(number, 1)
	}
	return max(nodes*share/100, 1)
}

// list is the first names, and how many more.
func list(names []string) string {
	const shown = 5
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}
