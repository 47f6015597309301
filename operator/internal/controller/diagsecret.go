// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// diagSecretRecheck is how long the reconciler trusts that the
// diagnostics' Secret it found is still there: a reconcile runs on every
// pod and RocenetNode event of a rollout, and needs no read of its own.
const diagSecretRecheck = time.Minute

// ensureDiagSecret is ensureDiagSecret and ensureScraperToken in the
// operator's namespace, read at most once a diagSecretRecheck.
func (r *NodePolicyReconciler) ensureDiagSecret(ctx context.Context) error {
	r.mu.Lock()
	fresh := !r.diagSecretSeen.IsZero() && r.now().Sub(r.diagSecretSeen) < diagSecretRecheck
	r.mu.Unlock()
	if fresh {
		return nil
	}
	if err := ensureDiagSecret(ctx, r.client, r.reader, r.opts.Namespace); err != nil {
		return err
	}
	if err := ensureScraperToken(ctx, r.client, r.reader, r.opts.Namespace); err != nil {
		return err
	}
	r.mu.Lock()
	r.diagSecretSeen = r.now()
	r.mu.Unlock()
	return nil
}

// DiagSecretName is the Secret whose key "secret" every rocenet-diagd of
// the cluster shares for its data port (docs/deploying.md): the policies'
// DaemonSets mount it.
const DiagSecretName = "rocenet-diag"

// ensureDiagSecret makes the diagnostics' Secret in namespace when there
// is none: 32 random bytes, in hex, made once and never changed by the
// operator. Rotating it is deleting it: the next reconcile makes a new
// one, which kubelet brings to every diagd. Not owned by anything, so it
// outlives the operator and its policies, as the running node side does.
// reader is uncached: the operator watches no Secret.
func ensureDiagSecret(ctx context.Context, c client.Client, reader client.Reader, namespace string) error {
	key := client.ObjectKey{Namespace: namespace, Name: DiagSecretName}
	err := reader.Get(ctx, key, &corev1.Secret{})
	if err == nil || !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading Secret %s: %w", key, err)
		}
		return nil
	}
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return fmt.Errorf("the diagnostics' secret: %w", err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: DiagSecretName, Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/part-of": "rocenet",
				"app.kubernetes.io/managed-by": "rocenet-operator"}},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{"secret": hex.EncodeToString(random)},
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("making Secret %s: %w", key, err)
	}
	return nil
}

// The account Prometheus scrapes the controller's metrics as, and the
// Secret of its token (packaging/kubernetes/monitoring): the
// ServiceMonitor names the Secret.
const (
	MetricsScraperAccount = "rocenet-metrics-scraper"
	MetricsScraperSecret  = "rocenet-metrics-scraper-token"
)

// ensureScraperToken makes the Secret of the metrics scraper's token in
// namespace when the account is there and the Secret is not: a
// service-account-token Secret, which the API server's token controller
// fills (and deletes with the account). Made here rather than shipped: a
// shipped one applied before its account (OLM makes the account from the
// CSV) would be deleted at once. Without the account (no monitoring
// installed), nothing.
func ensureScraperToken(ctx context.Context, c client.Client, reader client.Reader, namespace string) error {
	account := client.ObjectKey{Namespace: namespace, Name: MetricsScraperAccount}
	if err := reader.Get(ctx, account, &corev1.ServiceAccount{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading ServiceAccount %s: %w", account, err)
	}
	key := client.ObjectKey{Namespace: namespace, Name: MetricsScraperSecret}
	if err := reader.Get(ctx, key, &corev1.Secret{}); err == nil || !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading Secret %s: %w", key, err)
		}
		return nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: MetricsScraperSecret, Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "rocenet-controller", "app.kubernetes.io/part-of": "rocenet",
				"app.kubernetes.io/managed-by": "rocenet-operator"},
			Annotations: map[string]string{corev1.ServiceAccountNameKey: MetricsScraperAccount}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("making Secret %s: %w", key, err)
	}
	return nil
}
