// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func nodeDaemonSetFor(name, image string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: name, Labels: NodeDaemonSetLabels},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: diagdContainer, Image: image}},
			Volumes: []corev1.Volume{{Name: diagdVolume, VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/run/rocenet"}}}},
		}}},
	}
}

// A run copies the diagd of the installation from files where there is
// one, else of the first node policy's DaemonSet by name; with neither,
// the error says what is missing.
func TestARunCopiesTheDiagdOfANodeDaemonSet(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		what    string
		objects []client.Object
		image   string
		err     string
	}{
		{"files", []client.Object{nodeDaemonSetFor("rocenet", "files:1"), nodeDaemonSetFor("rocenet-gaudi", "policy:1")}, "files:1", ""},
		{"policies", []client.Object{nodeDaemonSetFor("rocenet-rack", "rack:1"), nodeDaemonSetFor("rocenet-gaudi", "gaudi:1")}, "gaudi:1", ""},
		{"none", nil, "", "no rocenet node DaemonSet in rocenet-system"},
	} {
		r := &TriageReconciler{reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objects...).Build(),
			opts: TriageOptions{Namespace: rocenetNS, DaemonSet: "rocenet"}}
		d, err := r.diagd(ctx)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.what, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.what, err)
		case d.container.Image != tc.image:
			t.Errorf("%s: the run copies %s, want %s", tc.what, d.container.Image, tc.image)
		}
	}
}
