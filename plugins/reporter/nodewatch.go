// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The reporter watches its own Node (a list and watch with the field
// selector metadata.name, as a kubelet does), so that its Node condition
// is what the API server holds, not what it last wrote: a Node deleted
// and made again (a new UID, without the condition) gets it back within
// the spread, and so does a condition someone else changed (rocenet-
// controller setting it Unknown while this reporter could not write, a
// hand removing it).

// nodeView is the reporter's Node as its watch last saw it. Safe for
// concurrent use: the watch writes it, Run reads it.
type nodeView struct {
	mu    sync.Mutex
	state nodeState
	// Closed and replaced at each change.
	changed chan struct{}
}

// nodeState is one view of the Node.
type nodeState struct {
	// The watch has listed the Node once: what follows is known.
	synced bool
	// The Node exists; its UID and rocenet's condition on it (nil: none).
	exists    bool
	uid       types.UID
	condition *corev1.NodeCondition
	// Counts the changes: a view is applied once.
	generation uint64
}

func newNodeView() *nodeView {
	return &nodeView{changed: make(chan struct{})}
}

// get is the view now and a channel closed at its next change.
func (v *nodeView) get() (nodeState, <-chan struct{}) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.state, v.changed
}

func (v *nodeView) update(f func(*nodeState)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	f(&v.state)
	v.state.generation++
	close(v.changed)
	v.changed = make(chan struct{})
}

// seen records a Node the watch delivered (nil: deleted).
func (v *nodeView) seen(node *corev1.Node) {
	v.update(func(s *nodeState) {
		s.exists, s.uid, s.condition = false, "", nil
		if node == nil {
			return
		}
		s.exists, s.uid = true, node.UID
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == v1alpha1.NodeConditionType {
				s.condition = node.Status.Conditions[i].DeepCopy()
			}
		}
	})
}

// nodeListWatch lists and watches one Node by name through a
// controller-runtime client: a plain list, then a watch (one object gains
// nothing from a streamed list, which a test's client cannot serve).
type nodeListWatch struct{ *toolscache.ListWatch }

func (nodeListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func newNodeListWatch(kube client.WithWatch, name string) nodeListWatch {
	only := client.MatchingFields{"metadata.name": name}
	return nodeListWatch{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &corev1.NodeList{}
			err := kube.List(ctx, list, only, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: opts.ResourceVersion}})
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			raw := opts.DeepCopy()
			raw.FieldSelector = ""
			return kube.Watch(ctx, &corev1.NodeList{}, only, &client.ListOptions{Raw: raw})
		},
	}}
}

// watchNode keeps view true to the Node name until ctx ends.
func watchNode(ctx context.Context, kube client.WithWatch, name string, view *nodeView) {
	mine := func(obj any) (*corev1.Node, bool) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		n, ok := obj.(*corev1.Node)
		// The watch asks for this node alone; a watch that does not filter
		// (a test's) is filtered here.
		return n, ok && n.Name == name
	}
	logger := klog.FromContext(ctx)
	_, informer := toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		Logger:        &logger,
		ListerWatcher: newNodeListWatch(kube, name),
		ObjectType:    &corev1.Node{},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if n, ok := mine(obj); ok {
					view.seen(n)
				}
			},
			UpdateFunc: func(_, obj any) {
				if n, ok := mine(obj); ok {
					view.seen(n)
				}
			},
			DeleteFunc: func(obj any) {
				if _, ok := mine(obj); ok {
					view.seen(nil)
				}
			},
		},
	})
	go func() {
		if toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			view.update(func(s *nodeState) { s.synced = true })
		}
	}()
	informer.RunWithContext(ctx)
}
