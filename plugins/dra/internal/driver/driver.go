// SPDX-License-Identifier: Apache-2.0

// Package driver is rocenet's DRA driver: it publishes the node's scale-out
// ports as one ResourceSlice pool, prepares the claims kubelet hands it
// (rocenetd reserves the ports for the claim's pods, a CDI spec gives the
// containers what the device plugin's Allocate gives), reports the ports'
// health to kubelet and writes each attached port's network data into its
// claim's status. Everything it knows comes from rocenetd's node stream or
// from the API server.
package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

// Options configure the driver.
type Options struct {
	DriverName string
	NodeName   string
	CDIDir     string
	RDMA       RDMADeviceSpecs
	Devices    DeviceOptions
	// Where containers see their claim's HCL files.
	HCLContainerDir string
	// The node's sysfs (where rdma_cm shows); empty: DefaultSysfsRoot.
	SysfsRoot string
	// How long kubelet may go without a health report before it calls a
	// port's health Unknown; reports are re-sent at a third of it.
	HealthTimeout time.Duration
	// The deadline of one call to rocenetd.
	CallTimeout time.Duration
}

// Publisher is the part of the kubelet plugin helper the driver publishes
// through (an interface, so tests can watch what is published).
type Publisher interface {
	PublishResources(ctx context.Context, resources resourceslice.DriverResources) error
}

// Driver implements kubeletplugin.DRAPlugin.
type Driver struct {
	opts Options
	// rocenetd's node, as the loops and prepare read it.
	node Node
	// The calls to rocenetd (reservations, attachments).
	daemon *Daemon
	kube   kubernetes.Interface
	// Called with errors the helper cannot recover from; the process
	// then stops (kubelet restarts the container).
	fatal func(error)
	// The health reports' time and re-send timer.
	clock clock.Clock
}

func (d *Driver) sysfsRoot() string {
	if d.opts.SysfsRoot == "" {
		return DefaultSysfsRoot
	}
	return d.opts.SysfsRoot
}

// New makes the driver, which follows the node that daemon.Watch keeps.
func New(opts Options, daemon *Daemon, kube kubernetes.Interface, fatal func(error)) *Driver {
	return &Driver{opts: opts, node: daemon, daemon: daemon, kube: kube, fatal: fatal, clock: clock.RealClock{}}
}

// PoolName is the node's pool: the node's name, as the helper names the
// slices of a node-local pool.
func (d *Driver) PoolName() string { return d.opts.NodeName }

// views is the latest snapshot's ports by device name; an error when
// rocenetd has not sent one yet.
func (d *Driver) views() (map[string]PortView, error) {
	state, _ := d.node.State()
	if state.Snapshot == nil {
		return nil, errors.New("rocenetd has not sent this node's ports yet (is it running?)")
	}
	views, _ := Ports(state.Snapshot)
	byDevice := make(map[string]PortView, len(views))
	for _, v := range views {
		byDevice[v.Device] = v
	}
	return byDevice, nil
}

// PrepareResourceClaims reserves each claim's ports at rocenetd for the
// claim's pods and writes the claim's CDI spec. Idempotent: rocenetd answers
// a repeated reservation with the one it has, and the spec is rewritten.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	byDevice, err := d.views()
	if err != nil {
		return nil, err
	}
	results := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		devices, err := d.prepare(ctx, claim, byDevice)
		if err != nil {
			klog.FromContext(ctx).Error(err, "prepare", "claim", klog.KObj(claim))
		}
		results[claim.UID] = kubeletplugin.PrepareResult{Devices: devices, Err: err}
	}
	return results, nil
}

func (d *Driver) prepare(ctx context.Context, claim *resourceapi.ResourceClaim, byDevice map[string]PortView) ([]kubeletplugin.Device, error) {
	name := claim.Namespace + "/" + claim.Name
	if claim.Status.Allocation == nil {
		return nil, fmt.Errorf("claim %s is not allocated", name)
	}
	var ports []PortView
	var devices []kubeletplugin.Device
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != d.opts.DriverName {
			continue
		}
		if r.Pool != d.PoolName() {
			return nil, fmt.Errorf("claim %s: device %s is of pool %s, not of this node's pool %s", name, r.Device, r.Pool, d.PoolName())
		}
		v, ok := byDevice[r.Device]
		if !ok {
			return nil, fmt.Errorf("claim %s: device %s is not a port of this node (any more)", name, r.Device)
		}
		ports = append(ports, v)
		devices = append(devices, kubeletplugin.Device{
			Requests:     []string{r.Request},
			PoolName:     r.Pool,
			DeviceName:   r.Device,
			CDIDeviceIDs: []string{CDIKind + "=" + CDIDeviceName(string(claim.UID), r.Device)},
		})
	}
	if len(ports) == 0 {
		return nil, nil
	}
	req := &pb.ReserveRequest{OwnerUid: string(claim.UID), Owner: name}
	for _, ref := range claim.Status.ReservedFor {
		if ref.APIGroup == "" && ref.Resource == "pods" {
			req.PodUids = append(req.PodUids, string(ref.UID))
		}
	}
	for _, v := range ports {
		req.PortIds = append(req.PortIds, v.Port.GetId())
	}
	callCtx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	reservation, err := d.daemon.Reservations.Reserve(callCtx, req)
	if err != nil {
		return nil, fmt.Errorf("claim %s: rocenetd did not reserve %s: %w", name, strings.Join(req.PortIds, ", "), err)
	}
	hcl := HCLFiles{HostDir: reservation.GetHclDir(), Files: reservation.GetHclFiles(), ContainerDir: d.opts.HCLContainerDir}
	if err := WriteCDISpec(d.opts.CDIDir, string(claim.UID), ClaimSpec(string(claim.UID), ports, d.opts.RDMA, hcl, rdmaCMPresent(d.sysfsRoot()))); err != nil {
		return nil, fmt.Errorf("claim %s: %w", name, err)
	}
	return devices, nil
}

// UnprepareResourceClaims releases each claim's reservation and removes its
// CDI spec. Idempotent: neither is an error when already gone.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	results := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		callCtx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
		_, err := d.daemon.Reservations.Release(callCtx, &pb.ReleaseRequest{OwnerUid: string(claim.UID)})
		cancel()
		if err != nil {
			err = fmt.Errorf("claim %s: rocenetd did not release its ports: %w", claim.String(), err)
		} else {
			err = RemoveCDISpec(d.opts.CDIDir, string(claim.UID))
		}
		if err != nil {
			klog.FromContext(ctx).Error(err, "unprepare", "claim", claim.String())
		}
		results[claim.UID] = err
	}
	return results, nil
}

// HandleError logs what the helper met in the background; an error it
// cannot recover from (a slice the API server refuses as invalid) stops
// the plugin.
func (d *Driver) HandleError(ctx context.Context, err error, msg string) {
	runtime.HandleErrorWithContext(ctx, err, msg)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) && d.fatal != nil {
		d.fatal(fmt.Errorf("%s: %w", msg, err))
	}
}

// HealthReport is every port's health as kubelet takes it: rocenetd's,
// or Unknown for every port while rocenetd is Lost.
//
// Unknown, neither Unhealthy nor silence. rocenetd away says nothing about
// a port: its link, address and the pods' traffic on it stay as they were,
// so Unhealthy (which the device plugin must say, having no other word)
// would be untrue, and would set off whatever remediation watches for it.
// Silence would end as Unknown too, but late and without a reason: kubelet
// has no timer for a report gone stale, and finds it Unknown only when it
// next builds the pod's status for another cause (its periodic sync of
// the pod, a minute or more). A report that changes the health makes
// kubelet update the status of the pods using the port at once, with the
// report's message (why) beside it.
func (d *Driver) HealthReport(state NodeState, now time.Time) kubeletplugin.DeviceHealthReport {
	views, _ := Ports(state.Snapshot)
	report := kubeletplugin.DeviceHealthReport{}
	for _, v := range views {
		h := kubeletplugin.DeviceHealth{
			PoolName:           d.PoolName(),
			DeviceName:         v.Device,
			Health:             kubeletplugin.HealthStatusHealthy,
			LastUpdated:        now,
			HealthCheckTimeout: d.opts.HealthTimeout,
		}
		switch {
		case state.Lost != nil:
			h.Health = kubeletplugin.HealthStatusUnknown
			h.Message = state.Lost.String()
		case !v.Healthy():
			h.Health = kubeletplugin.HealthStatusUnhealthy
			h.Message = "rocenetd: " + v.FailingConditions()
		}
		report.Devices = append(report.Devices, h)
	}
	return report
}

// WatchHealthStatus sends kubelet every port's health: nothing before
// rocenetd's first snapshot, then at once, on every change of the node
// (rocenetd's snapshots, rocenetd lost) and again a third of the health
// timeout after the last report, so that kubelet's copy never goes stale.
func (d *Driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	resend := d.opts.HealthTimeout / 3
	for {
		state, changed := d.node.State()
		if state.Snapshot != nil {
			select {
			case <-ctx.Done():
				return nil
			case reports <- d.HealthReport(state, d.clock.Now()):
			}
		}
		timer := d.clock.NewTimer(resend)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
			timer.Stop()
		case <-timer.C():
		}
	}
}

// Publish keeps the node's ResourceSlice pool equal to rocenetd's ports
// until ctx ends: nothing before rocenetd's first snapshot (an empty pool
// would tell the scheduler the node has no ports), then every change.
func (d *Driver) Publish(ctx context.Context, publisher Publisher) {
	logger := klog.FromContext(ctx)
	var published []resourceapi.Device
	first := true
	for {
		state, changed := d.node.State()
		if snapshot := state.Snapshot; snapshot != nil {
			views, clashes := Ports(snapshot)
			for _, c := range clashes {
				logger.Error(nil, "port left out of the ResourceSlice: its id gives no device name of its own", "port", c)
			}
			devices := Devices(views, d.opts.Devices)
			if first || !apiequality.Semantic.DeepEqual(devices, published) {
				resources := resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
					d.PoolName(): {Slices: []resourceslice.Slice{{Devices: devices}}},
				}}
				if err := publisher.PublishResources(ctx, resources); err != nil {
					logger.Error(err, "publishing the ResourceSlice")
				} else {
					logger.Info("ResourceSlice updated", "devices", len(devices), "generation", snapshot.GetGeneration())
					published, first = devices, false
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
