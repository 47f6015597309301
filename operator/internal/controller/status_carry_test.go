// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// Every field of the status ComputeStatus does not compute is another
// writer's (a triage's budget, say), and is kept as the cluster has it;
// the fields it does compute are its own whatever the cluster says.
func TestComputeStatusKeepsWhatItDoesNotCompute(t *testing.T) {
	owned := map[string]bool{"conditions": true, "targetNodes": true, "readyNodeCount": true, "readyNodes": true,
		"excludedNodes": true, "staleNodes": true, "missingNodeCount": true, "missingNodes": true, "readyPorts": true,
		"rails": true, "degradedNodes": true, "degradedNodeCount": true, "versions": true, "version": true}
	fleet := Fleet{Nodes: []v1alpha1.RocenetNode{rnode("n1"), rnode("n2", portDown(0))}, NodeReady: ready("n1", "n2")}
	fresh, _ := ComputeStatus(nil, fleet, now, DefaultStaleAfter)

	// Every field of the cluster's status set to something ComputeStatus
	// would not compute.
	cluster := &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName}}
	fill(reflect.ValueOf(&cluster.Status).Elem())
	got, _ := ComputeStatus(cluster, fleet, now, DefaultStaleAfter)

	st := reflect.TypeOf(got)
	for i := range st.NumField() {
		name := strings.Split(st.Field(i).Tag.Get("json"), ",")[0]
		g, f, c := reflect.ValueOf(got).Field(i), reflect.ValueOf(fresh).Field(i), reflect.ValueOf(cluster.Status).Field(i)
		switch {
		case name == "conditions":
			// Its own three set, another writer's kept.
			for _, want := range fresh.Conditions {
				if have := meta.FindStatusCondition(got.Conditions, want.Type); have == nil || have.Status != want.Status ||
					have.Message != want.Message {
					t.Errorf("condition %s: %+v, want %+v", want.Type, have, want)
				}
			}
			if meta.FindStatusCondition(got.Conditions, "x") == nil {
				t.Errorf("another writer's condition dropped: %+v", got.Conditions)
			}
		case owned[name]:
			if !reflect.DeepEqual(g.Interface(), f.Interface()) {
				t.Errorf("%s: %v, want %v (computed)", name, g.Interface(), f.Interface())
			}
		default:
			if !reflect.DeepEqual(g.Interface(), c.Interface()) {
				t.Errorf("%s: %v, want %v (kept)", name, g.Interface(), c.Interface())
			}
		}
	}
}

// fill sets every field of v to a value that is not its zero: a
// condition of type "x", strings "x", numbers 7, one element per list.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(metav1.Time{}) {
			v.Set(reflect.ValueOf(metav1.NewTime(now.Add(-time.Hour))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Ptr:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}
