// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// An installation from files is adopted: its DaemonSet deleted with its
// pods left running, each pod serving its node until the policy's pod
// beside it is ready, then deleted, in the policy's waves; never a node
// without a ready pod.
func TestEnvtestAPolicyAdoptsAnInstallationFromFiles(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Four nodes, two to a leaf, each running the files' pod, ready, its
	// RocenetNode that pod's word.
	labels := map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: "files"}
	for k, v := range NodeDaemonSetLabels {
		labels[k] = v
	}
	files := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: rocenetNS, Labels: labels},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: NodeDaemonSetLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "rocenetd", Image: "registry.example/rocenet:0"}}}}}}
	must(admin.Create(ctx, files))
	var names []string
	filePods := map[string]types.UID{}
	for i := range 4 {
		name := fmt.Sprintf("g%d", i)
		names = append(names, name)
		must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gaudi": "true"}}}))
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rocenet-" + name, Namespace: rocenetNS, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "rocenet",
				UID: files.UID, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "rocenetd", Image: "registry.example/rocenet:0"}}}}
		must(admin.Create(ctx, pod))
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		must(admin.Status().Update(ctx, pod))
		filePods[name] = pod.UID
		rn := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		must(admin.Create(ctx, rn))
		rn.Status = v1alpha1.RocenetNodeStatus{PortCount: 1, ReadyPortCount: 1, ReporterPod: string(pod.UID),
			Ports: []v1alpha1.PortStatus{{Name: "so0", State: "up", Healthy: true,
				Switch: &v1alpha1.SwitchPort{SystemName: fmt.Sprintf("leaf%d", i/2)}}}}
		must(admin.Status().Update(ctx, rn))
	}
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1"})
	standIn := &daemonSetStandIn{t: t, c: admin, key: client.ObjectKey{Namespace: rocenetNS, Name: "rocenet-gaudi"},
		nodes: names, stuck: map[string]bool{}, hashes: map[string]int64{}, unreported: map[string]unreported{},
		silent: map[string]bool{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := standIn.step(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("the DaemonSet stand-in: %v", err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})

	// Watch every pod: a node is served while one of its pods is ready and
	// not going.
	var pods corev1.PodList
	must(admin.List(ctx, &pods, client.InNamespace(rocenetNS)))
	watch, err := admin.Watch(ctx, &corev1.PodList{}, client.InNamespace(rocenetNS),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: pods.ResourceVersion}})
	must(err)
	defer watch.Stop()
	serving := map[string]map[string]bool{} // node: ready pods not going
	for _, n := range names {
		serving[n] = map[string]bool{"rocenet-" + n: true}
	}
	retired := map[string]bool{}
	var unserved []string

	must(admin.Create(ctx, &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("gaudi", "true"),
			Rollout: v1alpha1.RolloutSettings{MaxUnavailable: ptr.To(intstr.FromInt32(4)), MaxPerLeaf: 1}}}))
	deadline := time.After(60 * time.Second)
	for len(retired) < len(names) {
		select {
		case e := <-watch.ResultChan():
			p, ok := e.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			node := podNode(p)
			if serving[node] == nil {
				continue
			}
			if e.Type == "DELETED" || p.DeletionTimestamp != nil || !podReady(p) {
				delete(serving[node], p.Name)
			} else {
				serving[node][p.Name] = true
			}
			if p.UID == filePods[node] && (e.Type == "DELETED" || p.DeletionTimestamp != nil) {
				retired[node] = true
			}
			if len(serving[node]) == 0 {
				unserved = append(unserved, node)
			}
		case <-deadline:
			t.Fatalf("the files' pods retired on %v of %v", retired, names)
		}
	}
	if len(unserved) > 0 {
		t.Errorf("nodes left without a ready pod while the installation was adopted: %v", unserved)
	}
	// The files' DaemonSet is gone, its pods orphaned (envtest runs no
	// garbage collector: the orphaning finalizer stays).
	var ds appsv1.DaemonSet
	must(admin.Get(ctx, client.ObjectKeyFromObject(files), &ds))
	if ds.DeletionTimestamp == nil || !slices.Contains(ds.Finalizers, metav1.FinalizerOrphanDependents) {
		t.Errorf("the files' DaemonSet: deletion %v, finalizers %v: want deleted, its pods orphaned", ds.DeletionTimestamp, ds.Finalizers)
	}
	deadline2 := time.Now().Add(30 * time.Second)
	for {
		var p v1alpha1.RocenetNodePolicy
		must(admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &p))
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyReady)
		if c != nil && c.Status == metav1.ConditionTrue && p.Status.UpdatedNodes == 4 {
			figure(t, "an installation from files adopted on 4 nodes: %q", c.Message)
			break
		}
		if time.Now().After(deadline2) {
			t.Fatalf("the policy after the adoption: %+v", p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
