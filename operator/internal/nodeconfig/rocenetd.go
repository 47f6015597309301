// SPDX-License-Identifier: Apache-2.0

// Package nodeconfig renders what a RocenetNodePolicy makes of a node's
// programs: rocenetd's configuration file.
package nodeconfig

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The paths rocenet's pod mounts (packaging/kubernetes/node/base/daemonset.yaml):
// fixed by the pod, not by the policy.
const (
	Socket       = "/run/rocenet/rocenetd.sock"
	StateDir     = "/var/lib/rocenet"
	Metrics      = ":50152"
	GaudinetPath = "/etc/habanalabs/gaudinet.json"
	NFDFeatures  = "/etc/kubernetes/node-feature-discovery/features.d/rocenet"
	NFDLabel     = "rocenet.io/scale-out-ready"
	// NetworkManager's drop-in that marks the policy's ports unmanaged
	// (networkManager: Unmanaged), in the host's conf.d the pod mounts.
	NetworkManagerDropIn = "/etc/NetworkManager/conf.d/90-rocenet.conf"
	// The CNI plugin as the pod's install-cni puts it in the host's CNI
	// binary directory, mounted into rocenetd too: its uninstall removes it.
	CNIPlugin = "/host/cni/bin/rocenet"
)

// Site is what the operator sets in rocenetd's configuration on every
// node, beside a policy's settings.
type Site struct {
	// rocenetd's sysfs_root: "" for the node's /sys; a simulated fabric's
	// tree (rocenet-controller --node-sysfs-root), mounted from the host.
	SysfsRoot string
	// The cluster's own networks (its pods' and Services'), reserved
	// beside the policy's reservedNetworks (addressing.reserved_networks).
	ClusterNetworks []string
}

// Rocenetd is rocenetd.yaml for the policy's spec, as stored (the API
// server has filled in its defaults); a field the spec leaves unset is
// left out, so rocenetd's own default holds.
func Rocenetd(spec *v1alpha1.RocenetNodePolicySpec) ([]byte, error) {
	return marshal(tree(spec))
}

// tree is rocenetd's configuration for spec as nested maps.
func tree(spec *v1alpha1.RocenetNodePolicySpec) map[string]any {
	c := map[string]any{
		"socket":          Socket,
		"state_dir":       StateDir,
		"metrics_address": Metrics,
	}
	ports := spec.Ports
	gaudi := map[string]any{"enabled": ptrOr(ports.Gaudi.Enabled, true)}
	if len(ports.Gaudi.ScaleOutPorts) > 0 {
		gaudi["scale_out_ports"] = ports.Gaudi.ScaleOutPorts
	}
	c["gaudi"] = gaudi
	c["interfaces"] = orEmpty(ports.Interfaces)
	c["drivers"] = orEmpty(ports.Drivers)

	a := spec.Addressing
	if a.Mode != "" {
		c["mode"] = a.Mode
	}
	addressing := map[string]any{"mtu": a.MTU, "static_routes": orEmpty(a.StaticRoutes),
		"reserved_networks": orEmpty(a.ReservedNetworks)}
	if a.RoutedPrefixLength != nil {
		addressing["routed_prefix_length"] = *a.RoutedPrefixLength
	}
	c["addressing"] = addressing

	qos := map[string]any{"pfc_unhealthy": spec.QoS.PFCUnhealthy}
	if spec.QoS.PFC != "" {
		qos["pfc"] = spec.QoS.PFC
	}
	c["qos"] = qos

	h := spec.Health
	health := map[string]any{"flap_unhealthy": ptrOr(h.FlapUnhealthy, true), "retransmit_unhealthy": h.RetransmitUnhealthy}
	if h.FlapDowns != 0 {
		health["flap_downs"] = h.FlapDowns
	}
	for key, d := range map[string]*time.Duration{"flap_window": durationOf(h.FlapWindow),
		"flap_stable": durationOf(h.FlapStable), "retransmit_quiet": durationOf(h.RetransmitQuiet)} {
		if d != nil {
			health[key] = d.String()
		}
	}
	for key, rate := range map[string]string{"retransmit_rate": h.RetransmitRate,
		"fec_corrected_rate": h.FECCorrectedRate, "fec_uncorrectable_rate": h.FECUncorrectableRate} {
		if rate != "" {
			// A number, not the string: rocenetd refuses a quoted one.
			health[key] = json.Number(rate)
		}
	}
	c["health"] = health

	outputs := map[string]any{"gaudinet": "", "nfd_features": "", "nfd_label": cmp.Or(spec.Outputs.NFDLabel, NFDLabel)}
	if ptrOr(spec.Outputs.Gaudinet, true) {
		outputs["gaudinet"] = GaudinetPath
	}
	if ptrOr(spec.Outputs.NFDFeatures, true) {
		outputs["nfd_features"] = NFDFeatures
	}
	if spec.NetworkManager != v1alpha1.NetworkManagerLeave {
		outputs["network_manager"] = NetworkManagerDropIn
	}
	outputs["cni_plugin"] = CNIPlugin
	c["outputs"] = outputs

	if spec.Logging.Level != "" {
		c["log_level"] = spec.Logging.Level
	}
	if spec.Logging.Format != "" {
		c["log_format"] = spec.Logging.Format
	}
	l := spec.Limits
	limits := map[string]any{}
	for key, v := range map[string]int32{"max_request_bytes": l.MaxRequestBytes, "max_concurrent_streams": l.MaxConcurrentStreams,
		"mutating_rpcs_per_second": l.MutatingRPCsPerSecond, "mutating_rpc_burst": l.MutatingRPCBurst,
		"max_string_bytes": l.MaxStringBytes} {
		if v != 0 {
			limits[key] = v
		}
	}
	if len(limits) > 0 {
		c["limits"] = limits
	}
	return c
}

func marshal(c map[string]any) ([]byte, error) {
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("rendering rocenetd's configuration: %w", err)
	}
	return out, nil
}

// Hash is the first 16 hex digits of the SHA-256 of a rendered
// configuration: on the pod template, so a change replaces the pods.
func Hash(config []byte) string {
	sum := sha256.Sum256(config)
	return hex.EncodeToString(sum[:])[:16]
}

func ptrOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func durationOf(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}
