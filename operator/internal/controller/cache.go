// SPDX-License-Identifier: Apache-2.0

package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// NewScheme is the controller's scheme: the core types, Jobs and
// DaemonSets (a triage's run), networking's (the ServiceCIDRs the node
// policies reserve) and rocenet.io/v1alpha1, nothing else (each
// type a scheme holds costs the process memory whether it is used or
// not).
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme, appsv1.AddToScheme,
		networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// CacheOptions keep the cache to what ComputeStatus reads: a Node is
// 10 kB or more of what it never reads (images, addresses, capacity,
// managedFields), a RocenetNode mostly its port table. Each type's
// transform trims an object as it enters the cache, and the reader shares
// the cached objects without a copy (nothing here writes to them): at 512
// nodes the process stays at 42 MiB resident, against 75 MiB with whole
// objects (docs/fleet.md#rocenet-controller).
//
// Of Jobs it keeps only the triage runs' in rocenet's namespace, of pods
// only the triage runs' holders there.
func CacheOptions(namespace string) cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Node{}:          {Transform: TrimNode, UnsafeDisableDeepCopy: ptr.To(true)},
			&v1alpha1.RocenetNode{}: {Transform: TrimRocenetNode, UnsafeDisableDeepCopy: ptr.To(true)},
			&batchv1.Job{}: {
				Label:      TriageJobSelector,
				Namespaces: map[string]cache.Config{namespace: {}},
			},
			&corev1.Pod{}: {
				Label:      TriageHolderSelector,
				Namespaces: map[string]cache.Config{namespace: {}},
			},
		},
	}
}

// ClientOptions make the manager's client read ConfigMaps, pods and
// DaemonSets from the API server, never through an informer: a cached read
// would watch every one in the cluster, which the controller may not and
// need not (it reads a few, in its namespace or by label). The triage's
// holder pods it reads from the cache itself, which watches those alone.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{
		DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Pod{}, &appsv1.DaemonSet{}},
	}}
}

var _ toolscache.TransformFunc = TrimNode

// TrimNode keeps of a Node its name, uid, resourceVersion, labels, pod
// CIDRs (which the node policies reserve: clusternets), Ready condition
// and rocenet's ScaleOutNetworkReady (without their heartbeat times, which
// the kubelet renews every few minutes) and allocatable
// rocenet.io/scale-out-port and habana.ai/gaudi (what a triage holds):
// everything else, the
// rest of the spec, images, addresses, capacity, annotations,
// managedFields, is dropped. Any other object passes unchanged.
func TrimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Labels: n.Labels,
		},
		Spec: corev1.NodeSpec{PodCIDRs: n.Spec.PodCIDRs},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady || c.Type == v1alpha1.NodeConditionType {
			c.LastHeartbeatTime = metav1.Time{}
			trimmed.Status.Conditions = append(trimmed.Status.Conditions, c)
		}
	}
	for _, r := range []corev1.ResourceName{ScaleOutPortResource, GaudiResource} {
		if count, ok := n.Status.Allocatable[r]; ok {
			if trimmed.Status.Allocatable == nil {
				trimmed.Status.Allocatable = corev1.ResourceList{}
			}
			trimmed.Status.Allocatable[r] = count
		}
	}
	return trimmed, nil
}

// TrimRocenetNode drops a RocenetNode's managedFields but the time of the
// last write (Observer reads it), and keeps of each port its name, rail,
// address and whether it is in a pod (what a triage needs to reach the
// node's rocenet-diagd); its counts, rails,
// conditions, version and heartbeat stay. Any other object passes
// unchanged.
func TrimRocenetNode(obj any) (any, error) {
	n, ok := obj.(*v1alpha1.RocenetNode)
	if !ok {
		return obj, nil
	}
	n.ManagedFields = lastWriteOnly(n.ManagedFields)
	for i, p := range n.Status.Ports {
		n.Status.Ports[i] = v1alpha1.PortStatus{Name: p.Name, Rail: p.Rail, Address: p.Address, InPod: p.InPod}
		// Its leaf switch, which a node policy's rollout counts nodes by.
		if p.Switch != nil {
			n.Status.Ports[i].Switch = &v1alpha1.SwitchPort{Chassis: p.Switch.Chassis, SystemName: p.Switch.SystemName}
		}
	}
	return n, nil
}

// nodeReady is whether a Node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
