// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// revision is a DaemonSet's ControllerRevision of a pod template hash.
func revision(name, hash string, number int64) appsv1.ControllerRevision {
	return appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: hash}}, Revision: number}
}

// A failed rollout puts back the revision before it, but never one an
// earlier rollout failed on: after a rollback, the revision before the
// current one (the good one, made current again) is the one that failed.
func TestARollbackNeverPutsBackTheRevisionThatFailed(t *testing.T) {
	good, broken := revision("rocenet-gaudi-good", "good", 1), revision("rocenet-gaudi-broken", "broken", 2)
	// The good one current again after the rollback: its number is the
	// newest.
	goodAgain := good
	goodAgain.Revision = 3
	for name, tc := range map[string]struct {
		revisions []appsv1.ControllerRevision
		earlier   *v1alpha1.RolloutFailure
		want      string
	}{
		"a change that failed goes back to the one before":      {[]appsv1.ControllerRevision{good, broken}, nil, "rocenet-gaudi-good"},
		"the first revision has nothing to go back to":          {[]appsv1.ControllerRevision{good}, nil, ""},
		"after a rollback, the failed revision is not put back": {[]appsv1.ControllerRevision{broken, goodAgain}, &v1alpha1.RolloutFailure{Revision: "rocenet-gaudi-broken"}, ""},
		"an earlier good one still is": {[]appsv1.ControllerRevision{revision("rocenet-gaudi-older", "older", 0), broken, goodAgain},
			&v1alpha1.RolloutFailure{Revision: "rocenet-gaudi-broken"}, "rocenet-gaudi-older"},
	} {
		if got := rollbackTarget(tc.revisions, tc.earlier); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
