// SPDX-License-Identifier: Apache-2.0

package nodeset

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeconfig"
)

// manifests/ is what the node overlays render today: a change to
// packaging/kubernetes reaches the operator's DaemonSets, or this fails.
func TestManifestsAreTheOverlaysDaemonSets(t *testing.T) {
	kubectl := os.Getenv("ROCENET_KUBECTL")
	if kubectl == "" {
		var err error
		if kubectl, err = exec.LookPath("kubectl"); err != nil {
			t.Skip("SKIPPED: no kubectl (ROCENET_KUBECTL, or kubectl on PATH) to render the node overlays with")
		}
	}
	for _, overlay := range Overlays {
		want, err := RenderOverlay(kubectl, "../../../packaging/kubernetes/node", overlay)
		if err != nil {
			t.Fatal(err)
		}
		got, err := manifests.ReadFile("manifests/" + overlay + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("manifests/%s.yaml is stale: run go generate ./operator/...", overlay)
		}
	}
}

func policy(mode string) *v1alpha1.RocenetNodePolicy {
	return &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{Mode: mode, PriorityClassName: "system-node-critical",
			Addressing: v1alpha1.AddressingSettings{MTU: 9000}, QoS: v1alpha1.QoSSettings{PFC: "0-3"}}}
}

func names[T any](s []T, name func(T) string) []string {
	out := make([]string, 0, len(s))
	for _, x := range s {
		out = append(out, name(x))
	}
	return out
}

func containerNames(s []corev1.Container) []string {
	return names(s, func(c corev1.Container) string { return c.Name })
}

// A policy's DaemonSet: the overlay's pod, on the nodes the policy holds,
// in the policy's image, with its configuration, replaced only by the
// operator; the containers of its mode; OpenShift's SCC where it runs.
func TestDaemonSetOfAPolicy(t *testing.T) {
	opts := Options{Namespace: "rocenet", Image: "registry.example/rocenet@sha256:0123"}
	p := policy(v1alpha1.NodePolicyDevicePlugin)
	p.Spec.Resources = map[string]corev1.ResourceRequirements{"rocenetd": {Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}}
	config, err := ConfigMaps(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := DaemonSet(p, config, opts)
	if err != nil {
		t.Fatal(err)
	}
	pod := ds.Spec.Template
	if ds.Name != "rocenet-gaudi" || ds.Namespace != "rocenet" ||
		ds.Spec.Selector.MatchLabels[v1alpha1.NodePolicyLabel] != "gaudi" || pod.Labels[v1alpha1.NodePolicyLabel] != "gaudi" {
		t.Errorf("DaemonSet %s/%s, selector %v, pod labels %v", ds.Namespace, ds.Name, ds.Spec.Selector.MatchLabels, pod.Labels)
	}
	// A new pod beside each old one at once, each waiting for the
	// operator's wave: no node without a pod serving it.
	if u := ds.Spec.UpdateStrategy; u.Type != appsv1.RollingUpdateDaemonSetStrategyType || u.RollingUpdate == nil ||
		u.RollingUpdate.MaxSurge.String() != "100%" || u.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
		len(pod.Spec.SchedulingGates) != 1 || pod.Spec.SchedulingGates[0].Name != RolloutGate {
		t.Errorf("strategy %+v, scheduling gates %v: want a surge of 100%%, none unavailable, every pod gated", u, pod.Spec.SchedulingGates)
	}
	if got := pod.Spec.NodeSelector; len(got) != 2 || got[v1alpha1.NodePolicyLabel] != "gaudi" || got["kubernetes.io/os"] != "linux" {
		t.Errorf("nodeSelector %v: want the nodes the policy holds", got)
	}
	// The overlay's Gaudi affinity is not the policy's: its selector is.
	if pod.Spec.Affinity != nil {
		t.Errorf("affinity %+v: want none beside the policy's record", pod.Spec.Affinity)
	}
	if pod.Annotations[ConfigHashAnnotation] != nodeconfig.Hash([]byte(config.Node.Data[NodeConfigKey])) ||
		config.Node.Name != "rocenet-gaudi-"+config.Hash || !*config.Node.Immutable || config.Live.Name != "rocenet-gaudi-live" {
		t.Errorf("config hash %q, ConfigMaps %s and %s", pod.Annotations[ConfigHashAnnotation], config.Node.Name, config.Live.Name)
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if c.Image != opts.Image {
			t.Errorf("container %s runs %s, want %s", c.Name, c.Image, opts.Image)
		}
		if c.Name == "rocenetd" && c.Resources.Limits.Memory().String() != "512Mi" {
			t.Errorf("rocenetd's resources %v, want the policy's", c.Resources)
		}
	}
	if got := containerNames(pod.Spec.Containers); !slices.Equal(got, []string{"device-plugin", "diagd", "node-reporter"}) {
		t.Errorf("containers %v", got)
	}
	// NetworkManager told to leave the ports: rocenetd has its conf.d and
	// the system bus; with Leave, neither.
	mounts := func(ds *appsv1.DaemonSet) []string {
		var out []string
		for _, c := range ds.Spec.Template.Spec.InitContainers {
			if c.Name == "rocenetd" {
				for _, m := range c.VolumeMounts {
					if m.MountPath == "/etc/NetworkManager/conf.d" || m.MountPath == "/run/dbus" {
						out = append(out, m.MountPath)
					}
				}
			}
		}
		return out
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == "rocenetd" && !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "cni-bin" && m.MountPath == "/host/cni/bin" && !m.ReadOnly
		}) {
			t.Errorf("rocenetd does not mount the host's CNI binary directory to remove the plugin: %v", c.VolumeMounts)
		}
	}
	if got := mounts(ds); !slices.Equal(got, []string{"/etc/NetworkManager/conf.d", "/run/dbus"}) {
		t.Errorf("NetworkManager Unmanaged: rocenetd mounts %v", got)
	}
	leave := policy(v1alpha1.NodePolicyDevicePlugin)
	leave.Spec.NetworkManager = v1alpha1.NetworkManagerLeave
	if lds, err := DaemonSet(leave, config, opts); err != nil || len(mounts(lds)) != 0 {
		t.Errorf("NetworkManager Leave: rocenetd mounts %v (%v)", mounts(lds), err)
	}
	// rocenetd a sidecar after the CNI plugin's installer: it outlives the
	// containers that call it, the reporter's uninstall as the pod ends.
	init := pod.Spec.InitContainers
	if got := containerNames(init); !slices.Equal(got, []string{"install-cni", "rocenetd"}) ||
		init[1].RestartPolicy == nil || *init[1].RestartPolicy != corev1.ContainerRestartPolicyAlways || init[0].RestartPolicy != nil {
		t.Errorf("init containers %v: want rocenetd a sidecar after install-cni", got)
	}
	// The reporter knows its policy, to uninstall rocenet from a node
	// that left it, and may remove diagd's validation file there.
	for _, c := range pod.Spec.Containers {
		if c.Name != "node-reporter" {
			continue
		}
		if !slices.Contains(c.Command, "--node-policy=gaudi") {
			t.Errorf("the reporter's command %v names no policy", c.Command)
		}
		for _, m := range c.VolumeMounts {
			if m.Name == "nfd-features" && m.ReadOnly {
				t.Errorf("the reporter's NFD features mount is read-only: it cannot remove the validation file")
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == "config" && (v.Projected == nil || len(v.Projected.Sources) != 2 ||
			v.Projected.Sources[0].ConfigMap.Name != config.Node.Name || v.Projected.Sources[1].ConfigMap.Name != config.Live.Name) {
			t.Errorf("the config volume %+v, want this revision's file and the live one", v.VolumeSource)
		}
	}
	if _, scc := pod.Annotations["openshift.io/required-scc"]; scc {
		t.Errorf("an SCC asked for on Kubernetes")
	}

	// DRA: the DRA plugin instead of the device plugin.
	dra, err := DaemonSet(policy(v1alpha1.NodePolicyDRA), config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := containerNames(dra.Spec.Template.Spec.Containers); !slices.Contains(got, "dra-plugin") || slices.Contains(got, "device-plugin") {
		t.Errorf("DRA containers %v", got)
	}
	// Host: neither plugin, nor the device plugin's volumes; every mount
	// still has its volume.
	host, err := DaemonSet(policy(v1alpha1.NodePolicyHost), config, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := host.Spec.Template.Spec
	volumes := names(hs.Volumes, func(v corev1.Volume) string { return v.Name })
	if got := containerNames(hs.Containers); slices.Contains(got, "device-plugin") || slices.Contains(got, "dra-plugin") ||
		slices.Contains(volumes, "device-plugins") {
		t.Errorf("Host: containers %v, volumes %v", got, volumes)
	}
	mounted := map[string]bool{}
	for _, c := range append(hs.InitContainers, hs.Containers...) {
		for _, m := range c.VolumeMounts {
			mounted[m.Name] = true
			if !slices.Contains(volumes, m.Name) {
				t.Errorf("Host: %s mounts %s, which the pod does not have", c.Name, m.Name)
			}
		}
	}
	// Nor a volume no container mounts (the device plugin's leave with it).
	for _, v := range volumes {
		if !mounted[v] {
			t.Errorf("Host: volume %s is mounted by no container", v)
		}
	}
	// OpenShift: the overlay's SCC and SELinux type; a policy's own
	// image and tolerations win over the operator's.
	p = policy(v1alpha1.NodePolicyDevicePlugin)
	p.Spec.Image = "quay.example/rocenet:1.0"
	p.Spec.Tolerations = []corev1.Toleration{{Key: "habana.ai/gaudi", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	osds, err := DaemonSet(p, config, Options{Namespace: "rocenet", Image: opts.Image, OpenShift: true})
	if err != nil {
		t.Fatal(err)
	}
	ospod := osds.Spec.Template
	if ospod.Annotations["openshift.io/required-scc"] != "rocenet" || ospod.Spec.SecurityContext.SELinuxOptions == nil ||
		ospod.Spec.Containers[0].Image != "quay.example/rocenet:1.0" || len(ospod.Spec.Tolerations) != 1 {
		t.Errorf("OpenShift pod: annotations %v, security %+v, image %s, tolerations %v", ospod.Annotations,
			ospod.Spec.SecurityContext, ospod.Spec.Containers[0].Image, ospod.Spec.Tolerations)
	}
	// A changed MTU is a new pod template; a changed log level is not
	// (rocenetd reloads it from the live file).
	p.Spec.Addressing.MTU = 9216
	changed, _ := ConfigMaps(p, opts)
	again, _ := DaemonSet(p, changed, opts)
	if again.Spec.Template.Annotations[ConfigHashAnnotation] == ds.Spec.Template.Annotations[ConfigHashAnnotation] {
		t.Errorf("a changed MTU left the pod template's hash as it was")
	}
	p.Spec.Logging.Level = "debug"
	hot, _ := ConfigMaps(p, opts)
	if hot.Hash != changed.Hash || hot.Live.Data[LiveConfigKey] == changed.Live.Data[LiveConfigKey] {
		t.Errorf("a changed log level: hash %s (was %s), live file %q", hot.Hash, changed.Hash, hot.Live.Data[LiveConfigKey])
	}
	// No image anywhere is an error, not a pod that cannot pull.
	if _, err := DaemonSet(policy(v1alpha1.NodePolicyDevicePlugin), config, Options{Namespace: "rocenet"}); err == nil {
		t.Errorf("a DaemonSet without an image")
	}
}

// For the simulated fabric and a cluster without kube-proxy: rocenetd's
// sysfs root, mounted from the host, and the API server's address given
// to the containers that call the API, and to no other.
func TestDaemonSetOnASimulatedFabric(t *testing.T) {
	opts := Options{Namespace: "rocenet", Image: "registry.example/rocenet:1",
		APIServer: "192.0.2.1:6443", SysfsRoot: "/run/fabric/sysfs"}
	p := policy(v1alpha1.NodePolicyDRA)
	config, err := ConfigMaps(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(config.Node.Data[NodeConfigKey], "sysfs_root: /run/fabric/sysfs\n") {
		t.Errorf("rocenetd's configuration has no sysfs_root:\n%s", config.Node.Data[NodeConfigKey])
	}
	ds, err := DaemonSet(p, config, opts)
	if err != nil {
		t.Fatal(err)
	}
	spec := ds.Spec.Template.Spec
	mounted := false
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		calls := c.Name == "node-reporter" || c.Name == "dra-plugin"
		if got := env["KUBERNETES_SERVICE_HOST"] + ":" + env["KUBERNETES_SERVICE_PORT"]; calls != (got == "192.0.2.1:6443") {
			t.Errorf("container %s: the API server at %q", c.Name, got)
		}
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/run/fabric/sysfs" {
				mounted = c.Name == "rocenetd" && m.ReadOnly
			}
		}
	}
	if !mounted {
		t.Errorf("the fabric's sysfs is not mounted read-only into rocenetd alone")
	}
	if _, err := DaemonSet(p, config, Options{Namespace: "rocenet", Image: "x", APIServer: "no-port"}); err == nil {
		t.Errorf("an API server address without a port is taken")
	}
}
