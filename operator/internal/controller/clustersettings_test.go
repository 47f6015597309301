// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"testing"
	"time"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The budget in force is the RocenetCluster's where its spec sets it,
// else the flags'; a value that does not parse keeps the flag's.
func TestTheTriageBudgetFromTheClusterSpec(t *testing.T) {
	b, err := newTriageBudget(nil, "10%", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		settings *v1alpha1.TriageBudgetSettings
		value    string
		window   time.Duration
	}{
		{nil, "10%", time.Hour},
		{&v1alpha1.TriageBudgetSettings{MaxUnvalidated: "3"}, "3", time.Hour},
		{&v1alpha1.TriageBudgetSettings{Window: "30m"}, "10%", 30 * time.Minute},
		{&v1alpha1.TriageBudgetSettings{MaxUnvalidated: "25%", Window: "2h"}, "25%", 2 * time.Hour},
		{&v1alpha1.TriageBudgetSettings{MaxUnvalidated: "ten", Window: "10s"}, "10%", time.Hour},
	} {
		b.configure(ctx, &v1alpha1.RocenetCluster{Spec: v1alpha1.RocenetClusterSpec{TriageBudget: tc.settings}})
		if b.value.String() != tc.value || b.window != tc.window {
			t.Errorf("spec %+v: budget %s over %s, want %s over %s", tc.settings, b.value.String(), b.window, tc.value, tc.window)
		}
	}
	// No RocenetCluster yet: the flags'.
	b.configure(ctx, nil)
	if b.value.String() != "10%" || b.window != time.Hour {
		t.Errorf("no RocenetCluster: budget %s over %s", b.value.String(), b.window)
	}
}
