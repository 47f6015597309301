// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The cluster-wide triage budget's defaults: at most 10 % of the cluster's
// nodes unvalidated by all triages together within an hour.
const (
	DefaultTriageBudget       = "10%"
	DefaultTriageBudgetWindow = time.Hour
)

// ParseBudget reads a budget or breaker value, "12" nodes or "10%" of
// them; an error names what is wrong.
func ParseBudget(text string) (intstr.IntOrString, error) {
	if strings.HasSuffix(text, "%") {
		share, err := strconv.Atoi(strings.TrimSuffix(text, "%"))
		if err != nil || share < 0 || share > 100 {
			return intstr.IntOrString{}, fmt.Errorf("%q: a share from 0%% to 100%%", text)
		}
		return intstr.FromString(text), nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return intstr.IntOrString{}, fmt.Errorf("%q: a number of nodes (0 or more) or a share (10%%)", text)
	}
	return intstr.FromInt32(int32(n)), nil
}

// unvalidatedBound is how many of n nodes a breaker or budget value allows
// to unvalidate: a number as it is; a share of the nodes, at least 2 (the
// two ends of one link); 0 in either form, none. rocenet-diagd's
// MaxUnvalidated is the same rule.
func unvalidatedBound(v *intstr.IntOrString, n int, fallback string) int {
	value := intstr.FromString(fallback)
	if v != nil {
		value = *v
	}
	if value.Type == intstr.Int {
		return max(0, value.IntValue())
	}
	share, err := strconv.Atoi(strings.TrimSuffix(value.StrVal, "%"))
	if err != nil || share <= 0 {
		return 0
	}
	return max(2, int(math.Floor(float64(share)*float64(n)/100)))
}

// triageBudget keeps the cluster's triage budget: the nodes unvalidated
// within the window and the runs in flight, in memory while this replica
// leads, written to the RocenetCluster's status (a merge patch of
// status.triageBudget alone) at every change and read back from it when a
// replica starts to lead. Its methods are safe from any goroutine.
type triageBudget struct {
	client client.Client
	// The flags' budget and window, and those in force: the
	// RocenetCluster's spec.triageBudget where it sets them.
	flagValue  intstr.IntOrString
	flagWindow time.Duration
	value      intstr.IntOrString
	window     time.Duration

	mu     sync.Mutex
	loaded bool
	spent  []v1alpha1.TriageBudgetSpend
	held   []v1alpha1.TriageBudgetReservation
}

func newTriageBudget(c client.Client, value string, window time.Duration) (*triageBudget, error) {
	if value == "" {
		value = DefaultTriageBudget
	}
	v, err := ParseBudget(value)
	if err != nil {
		return nil, fmt.Errorf("the triage budget %w", err)
	}
	if window <= 0 {
		window = DefaultTriageBudgetWindow
	}
	return &triageBudget{client: c, flagValue: v, flagWindow: window, value: v, window: window}, nil
}

// configure takes the budget and window in force from the cluster's
// spec, else the flags'. The CRD validates them; a value it let through
// that does not parse keeps the flag's, and the log says so.
func (b *triageBudget) configure(ctx context.Context, cluster *v1alpha1.RocenetCluster) {
	b.value, b.window = b.flagValue, b.flagWindow
	if cluster == nil || cluster.Spec.TriageBudget == nil {
		return
	}
	settings := cluster.Spec.TriageBudget
	if settings.MaxUnvalidated != "" {
		if v, err := ParseBudget(settings.MaxUnvalidated); err == nil {
			b.value = v
		} else {
			klog.FromContext(ctx).Error(err, "RocenetCluster spec.triageBudget.maxUnvalidated: the flag's budget stays", "budget", b.flagValue.String())
		}
	}
	if settings.Window != "" {
		if d, err := time.ParseDuration(settings.Window); err == nil && d >= time.Minute {
			b.window = d
		} else {
			klog.FromContext(ctx).Error(err, "RocenetCluster spec.triageBudget.window: at least 1m; the flag's window stays",
				"window", settings.Window)
		}
	}
}

// load reads the ledger a previous leader left, once.
func (b *triageBudget) load(ctx context.Context, cluster *v1alpha1.RocenetCluster) {
	if b.loaded || cluster == nil {
		return
	}
	b.loaded = true
	if tb := cluster.Status.TriageBudget; tb != nil {
		b.spent = append([]v1alpha1.TriageBudgetSpend(nil), tb.Spent...)
		b.held = append([]v1alpha1.TriageBudgetReservation(nil), tb.Reservations...)
	}
}

// cluster reads the RocenetCluster (nil: none yet) and how many nodes the
// budget's share is of: its target nodes, else every RocenetNode.
func (b *triageBudget) cluster(ctx context.Context) (*v1alpha1.RocenetCluster, int, error) {
	var c v1alpha1.RocenetCluster
	err := b.client.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterName}, &c)
	if apierrors.IsNotFound(err) {
		var nodes v1alpha1.RocenetNodeList
		if err := b.client.List(ctx, &nodes); err != nil {
			return nil, 0, fmt.Errorf("listing RocenetNodes for the triage budget: %w", err)
		}
		return nil, len(nodes.Items), nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the RocenetCluster %s for the triage budget: %w", v1alpha1.ClusterName, err)
	}
	n := int(c.Status.TargetNodes)
	if n == 0 {
		var nodes v1alpha1.RocenetNodeList
		if err := b.client.List(ctx, &nodes); err != nil {
			return nil, 0, fmt.Errorf("listing RocenetNodes for the triage budget: %w", err)
		}
		n = len(nodes.Items)
	}
	return &c, n, nil
}

// prune drops what has left the window, and the reservations of runs that
// can no longer be in flight (twice the window old).
func (b *triageBudget) prune(now time.Time) {
	spent := b.spent[:0]
	for _, s := range b.spent {
		if now.Sub(s.Time.Time) < b.window {
			spent = append(spent, s)
		}
	}
	b.spent = spent
	held := b.held[:0]
	for _, h := range b.held {
		if now.Sub(h.Since.Time) < 2*b.window {
			held = append(held, h)
		}
	}
	b.held = held
}

func (b *triageBudget) reserved(except string) int {
	n := 0
	for _, h := range b.held {
		if h.Triage != except {
			n += int(h.Nodes)
		}
	}
	return n
}

// Reserve is what run `run` of triage `key` (namespace/name) may
// unvalidate: the lesser of `want` (its own breaker) and what the budget
// has left, held for it until Settle or Release. It says why when the
// budget allows less than the run asked for.
func (b *triageBudget) Reserve(ctx context.Context, key string, run int32, want int, now time.Time) (int, string, error) {
	cluster, nodes, err := b.cluster(ctx)
	if err != nil {
		return 0, "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.configure(ctx, cluster)
	b.load(ctx, cluster)
	b.prune(now)
	b.drop(key)
	limit := unvalidatedBound(&b.value, nodes, DefaultTriageBudget)
	left := max(0, limit-len(b.spent)-b.reserved(key))
	allowed := min(want, left)
	why := ""
	if allowed < want {
		why = fmt.Sprintf("the cluster's triage budget allows %d (%d of %d nodes unvalidated in the last %s, %d held by runs in flight)",
			allowed, len(b.spent), limit, b.window, b.reserved(key))
	}
	b.held = append(b.held, v1alpha1.TriageBudgetReservation{Triage: key, Run: run, Nodes: int32(allowed), Since: metav1.Time{Time: now}})
	return allowed, why, b.write(ctx, cluster, nodes, now)
}

// Settle ends the reservation of triage key's run: the nodes it
// unvalidated spend the budget from now (a node already spent within the
// window counts once, from its latest time).
func (b *triageBudget) Settle(ctx context.Context, key string, unvalidated []string, now time.Time) error {
	cluster, nodes, err := b.cluster(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.configure(ctx, cluster)
	b.load(ctx, cluster)
	b.prune(now)
	b.drop(key)
	for _, node := range unvalidated {
		kept := b.spent[:0]
		for _, s := range b.spent {
			if s.Node != node {
				kept = append(kept, s)
			}
		}
		b.spent = append(kept, v1alpha1.TriageBudgetSpend{Node: node, Time: metav1.Time{Time: now}, Triage: key})
	}
	return b.write(ctx, cluster, nodes, now)
}

// Release ends the reservation of triage key's run, which spent nothing.
func (b *triageBudget) Release(ctx context.Context, key string, now time.Time) error {
	return b.Settle(ctx, key, nil, now)
}

func (b *triageBudget) drop(key string) {
	held := b.held[:0]
	for _, h := range b.held {
		if h.Triage != key {
			held = append(held, h)
		}
	}
	b.held = held
}

// write puts the ledger into the RocenetCluster's status, when there is
// one: a merge patch of status.triageBudget, which the cluster's own
// reconciler carries over.
func (b *triageBudget) write(ctx context.Context, cluster *v1alpha1.RocenetCluster, nodes int, now time.Time) error {
	if cluster == nil {
		return nil
	}
	sort.SliceStable(b.spent, func(i, j int) bool { return b.spent[i].Time.Before(&b.spent[j].Time) })
	limit := unvalidatedBound(&b.value, nodes, DefaultTriageBudget)
	tb := &v1alpha1.TriageBudget{
		MaxUnvalidated: b.value.String(),
		Window:         b.window.String(),
		Limit:          int32(limit),
		Used:           int32(len(b.spent)),
		Reserved:       int32(b.reserved("")),
		Spent:          append([]v1alpha1.TriageBudgetSpend(nil), b.spent...),
		Reservations:   append([]v1alpha1.TriageBudgetReservation(nil), b.held...),
		UpdateTime:     &metav1.Time{Time: now},
	}
	tb.Remaining = int32(max(0, limit-len(b.spent)-b.reserved("")))
	if n := len(tb.Spent); n > v1alpha1.MaxTriageBudgetEntries {
		tb.Spent = tb.Spent[n-v1alpha1.MaxTriageBudgetEntries:]
	}
	if n := len(tb.Reservations); n > v1alpha1.MaxTriageBudgetEntries {
		tb.Reservations = tb.Reservations[n-v1alpha1.MaxTriageBudgetEntries:]
	}
	patched := cluster.DeepCopy()
	patched.Status.TriageBudget = tb
	if err := b.client.Status().Patch(ctx, patched, client.MergeFrom(cluster), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("writing the triage budget into RocenetCluster %s: %w", cluster.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("triage budget", "limit", limit, "used", tb.Used, "reserved", tb.Reserved)
	return nil
}
