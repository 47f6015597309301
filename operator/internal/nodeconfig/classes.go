// SPDX-License-Identifier: Apache-2.0

package nodeconfig

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// Class is what a change of a configuration key does to a node.
type Class int

// The classes, least disruptive first: a change is of its worst key's.
const (
	// Hot: rocenetd reloads the key (it watches its configuration); no
	// pod is replaced, no port touched.
	Hot Class = iota
	// Restart: rocenet's pods are replaced, in waves; rocenetd takes the
	// ports over as they are, and traffic goes on.
	Restart
	// PortDisruptive: the ports are configured again (MTU, routes, PFC):
	// their traffic stops for a moment, node by node, in waves.
	PortDisruptive
	// NodeDisruptive: which ports rocenet manages, or how pods get them,
	// changes: the node's jobs lose or change their ports.
	NodeDisruptive
)

// String is the class as the policy's status and kubectl rocenet say it.
func (c Class) String() string {
	return [...]string{"Hot", "Restart", "PortDisruptive", "NodeDisruptive"}[c]
}

// keyClass is each key of rocenetd's configuration by its class; a
// prefix "x." is every key under x. A key not listed is NodeDisruptive
// (the safe side for one added later).
var keyClass = map[string]Class{
	"log_level":                       Hot,
	"health.":                         Hot,
	"qos.pfc_unhealthy":               Hot,
	"limits.mutating_rpcs_per_second": Hot,
	"limits.mutating_rpc_burst":       Hot,
	"limits.max_string_bytes":         Hot,
	"addressing.reserved_networks":    Hot,     // only ever holds a port
	"outputs.nfd_label":               Restart, // the feature file, rewritten at start
	"log_format":                      Restart,
	"limits.max_request_bytes":        Restart,
	"limits.max_concurrent_streams":   Restart,
	"socket":                          Restart,
	"state_dir":                       Restart,
	"metrics_address":                 Restart,
	"addressing.":                     PortDisruptive,
	"qos.pfc":                         PortDisruptive,
	"mode":                            NodeDisruptive,
	"gaudi.":                          NodeDisruptive,
	"interfaces":                      NodeDisruptive,
	"drivers":                         NodeDisruptive,
	"outputs.":                        NodeDisruptive,
}

// ClassOf is the class of a key by its dotted path.
func ClassOf(key string) Class {
	if c, ok := keyClass[key]; ok {
		return c
	}
	for prefix, c := range keyClass {
		if strings.HasSuffix(prefix, ".") && strings.HasPrefix(key, prefix) {
			return c
		}
	}
	return NodeDisruptive
}

// Split is the configuration in two files: node, every key but the hot
// ones, which only a new pod takes (its ConfigMap is made per revision);
// and live, the hot keys, which rocenetd reloads where it runs. rocenetd
// reads config.yaml and then live.yaml over it, key by key.
//
// site adds what the operator, not the policy, sets (Site).
func Split(spec *v1alpha1.RocenetNodePolicySpec, site Site) (node, live []byte, err error) {
	all := flatten(tree(spec))
	if site.SysfsRoot != "" {
		all["sysfs_root"] = site.SysfsRoot
	}
	if len(site.ClusterNetworks) > 0 {
		reserved := slices.Concat(orEmpty(spec.Addressing.ReservedNetworks), site.ClusterNetworks)
		slices.Sort(reserved)
		all["addressing.reserved_networks"] = slices.Compact(reserved)
	}
	nodeTree, liveTree := map[string]any{}, map[string]any{}
	for key, value := range all {
		target := nodeTree
		if ClassOf(key) == Hot {
			target = liveTree
		}
		setPath(target, key, value)
	}
	if node, err = marshal(nodeTree); err != nil {
		return nil, nil, err
	}
	if live, err = marshal(liveTree); err != nil {
		return nil, nil, err
	}
	return node, live, nil
}

// Change is what a new spec changes in rocenetd's configuration.
type Change struct {
	// The worst class of the keys changed; Hot when none changed.
	Class Class
	// The keys changed, by dotted path, sorted.
	Keys []string
}

// Diff is the change from the configuration of before to that of after.
func Diff(before, after *v1alpha1.RocenetNodePolicySpec) Change {
	return diff(flatten(tree(before)), flatten(tree(after)))
}

// DiffFiles is the change from one rendered configuration file to
// another (config.yaml of two revisions).
func DiffFiles(before, after []byte) (Change, error) {
	var a, b map[string]any
	if err := yaml.Unmarshal(before, &a); err != nil {
		return Change{}, fmt.Errorf("the earlier configuration: %w", err)
	}
	if err := yaml.Unmarshal(after, &b); err != nil {
		return Change{}, fmt.Errorf("the later configuration: %w", err)
	}
	return diff(flatten(a), flatten(b)), nil
}

func diff(a, b map[string]any) Change {
	var change Change
	for key := range a {
		if _, ok := b[key]; !ok {
			change.Keys = append(change.Keys, key)
		}
	}
	for key, v := range b {
		if old, ok := a[key]; !ok || fmt.Sprint(old) != fmt.Sprint(v) {
			change.Keys = append(change.Keys, key)
		}
	}
	slices.Sort(change.Keys)
	for _, key := range change.Keys {
		change.Class = max(change.Class, ClassOf(key))
	}
	return change
}

// flatten is the leaves of a configuration tree by dotted path (a list is
// a leaf: rocenetd replaces lists whole).
func flatten(tree map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", tree)
	return out
}

// setPath sets the dotted key in a tree of maps.
func setPath(tree map[string]any, key string, value any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := tree[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			tree[p] = sub
		}
		tree = sub
	}
	tree[parts[len(parts)-1]] = value
}
