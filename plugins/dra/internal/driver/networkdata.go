// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

// ReadyCondition is the condition of an attached port in its claim's
// status.devices[] entry.
const ReadyCondition = "Ready"

// NetworkStatus is what a reservation's claim status should list for this
// driver: one entry per reserved port that is attached to one of the
// reservation's pods, with the port's name, addresses and MAC in the pod.
// Sorted by device name.
func NetworkStatus(driverName, pool string, r *pb.Reservation, attachments []*pb.Attachment) []resourceapi.AllocatedDeviceStatus {
	pods := map[string]bool{}
	for _, uid := range r.GetPodUids() {
		pods[uid] = true
	}
	byPort := map[string]*pb.Attachment{}
	for _, a := range attachments {
		if a.GetState() == "attached" && pods[a.GetPod().GetUid()] {
			byPort[a.GetPortId()] = a
		}
	}
	var out []resourceapi.AllocatedDeviceStatus
	for _, id := range r.GetPortIds() {
		a, ok := byPort[id]
		if !ok {
			continue
		}
		data := &resourceapi.NetworkDeviceData{InterfaceName: a.GetIfname(), HardwareAddress: a.GetMac()}
		for _, ip := range a.GetIps() {
			data.IPs = append(data.IPs, ip.GetAddress())
		}
		pod := a.GetPod().GetNamespace() + "/" + a.GetPod().GetName()
		out = append(out, resourceapi.AllocatedDeviceStatus{
			Driver:      driverName,
			Pool:        pool,
			Device:      DeviceName(id),
			NetworkData: data,
			Conditions: []metav1.Condition{{
				Type:    ReadyCondition,
				Status:  metav1.ConditionTrue,
				Reason:  "Attached",
				Message: fmt.Sprintf("port %s (%s) is %s in pod %s", id, a.GetHostIfname(), a.GetIfname(), pod),
			}},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

// mergeStatus replaces this driver's entries of the pool in a claim's
// status.devices with `ours`, keeping every other entry; a condition that
// did not change keeps its transition time.
func mergeStatus(existing []resourceapi.AllocatedDeviceStatus, driverName, pool string, ours []resourceapi.AllocatedDeviceStatus, now metav1.Time) []resourceapi.AllocatedDeviceStatus {
	var merged []resourceapi.AllocatedDeviceStatus
	old := map[string]resourceapi.AllocatedDeviceStatus{}
	for _, e := range existing {
		if e.Driver == driverName && e.Pool == pool {
			old[e.Device] = e
			continue
		}
		merged = append(merged, e)
	}
	for _, e := range ours {
		e = *e.DeepCopy()
		for i := range e.Conditions {
			e.Conditions[i].LastTransitionTime = now
			if prev, ok := old[e.Device]; ok {
				for _, c := range prev.Conditions {
					if c.Type == e.Conditions[i].Type && c.Status == e.Conditions[i].Status {
						e.Conditions[i].LastTransitionTime = c.LastTransitionTime
					}
				}
			}
		}
		merged = append(merged, e)
	}
	return merged
}

// SyncNetworkData writes each attached port's network data into its
// claim's status until ctx ends: after every change rocenetd sends (an
// attachment changes the port's place) and every `interval`.
func (d *Driver) SyncNetworkData(ctx context.Context, interval time.Duration) {
	written := map[string][]resourceapi.AllocatedDeviceStatus{}
	for {
		_, changed := d.node.State()
		if err := d.syncNetworkData(ctx, written); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "claim network data")
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-time.After(interval):
		}
	}
}

func (d *Driver) syncNetworkData(ctx context.Context, written map[string][]resourceapi.AllocatedDeviceStatus) error {
	callCtx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	reservations, err := d.daemon.Reservations.List(callCtx, &pb.ListReservationsRequest{})
	if err != nil {
		return fmt.Errorf("rocenetd's reservations: %w", err)
	}
	attachments, err := d.daemon.Attachments.List(callCtx, &pb.ListAttachmentsRequest{})
	if err != nil {
		return fmt.Errorf("rocenetd's attachments: %w", err)
	}
	live := map[string]bool{}
	var errs []string
	for _, r := range reservations.GetReservations() {
		live[r.GetOwnerUid()] = true
		ours := NetworkStatus(d.opts.DriverName, d.PoolName(), r, attachments.GetAttachments())
		if prev, ok := written[r.GetOwnerUid()]; ok && apiequality.Semantic.DeepEqual(prev, ours) {
			continue
		}
		err := d.writeClaimStatus(ctx, r, ours)
		if errors.Is(err, errClaimGone) {
			// The claim was deleted while nobody could unprepare it (the
			// node or the plugin was down): kubelet never will, so its
			// ports are freed here.
			err = d.releaseStale(ctx, r)
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		written[r.GetOwnerUid()] = ours
	}
	for uid := range written {
		if !live[uid] {
			delete(written, uid)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// errClaimGone: a reservation's claim is not in the API server any more
// (or a newer claim has its name).
var errClaimGone = errors.New("the claim is gone")

func (d *Driver) releaseStale(ctx context.Context, r *pb.Reservation) error {
	callCtx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	if _, err := d.daemon.Reservations.Release(callCtx, &pb.ReleaseRequest{OwnerUid: r.GetOwnerUid()}); err != nil {
		return fmt.Errorf("releasing the reservation of deleted claim %s (%s): %w", r.GetOwner(), r.GetOwnerUid(), err)
	}
	if err := RemoveCDISpec(d.opts.CDIDir, r.GetOwnerUid()); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("released the ports of a deleted claim", "claim", r.GetOwner(), "uid", r.GetOwnerUid(), "ports", r.GetPortIds())
	return nil
}

func (d *Driver) writeClaimStatus(ctx context.Context, r *pb.Reservation, ours []resourceapi.AllocatedDeviceStatus) error {
	ns, name, ok := strings.Cut(r.GetOwner(), "/")
	if !ok {
		return fmt.Errorf("reservation %s: owner %q is not namespace/name", r.GetOwnerUid(), r.GetOwner())
	}
	claims := d.kube.ResourceV1().ResourceClaims(ns)
	claim, err := claims.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return errClaimGone
	}
	if err != nil {
		return fmt.Errorf("claim %s: %w", r.GetOwner(), err)
	}
	if string(claim.UID) != r.GetOwnerUid() {
		return errClaimGone
	}
	merged := mergeStatus(claim.Status.Devices, d.opts.DriverName, d.PoolName(), ours, metav1.Now())
	if apiequality.Semantic.DeepEqual(merged, claim.Status.Devices) {
		return nil
	}
	claim = claim.DeepCopy()
	claim.Status.Devices = merged
	if _, err := claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim %s status: %w", r.GetOwner(), err)
	}
	klog.FromContext(ctx).Info("claim network data written", "claim", r.GetOwner(), "devices", len(ours))
	return nil
}
