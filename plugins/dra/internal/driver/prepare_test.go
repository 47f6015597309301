// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"k8s.io/utils/clock"

	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// reservingDaemon answers Reserve and Release as rocenetd would, or with
// `refuse`.
type reservingDaemon struct {
	pb.ReservationsClient
	reserved map[string]*pb.ReserveRequest
	released []string
	refuse   error
}

func (r *reservingDaemon) Reserve(_ context.Context, req *pb.ReserveRequest, _ ...grpc.CallOption) (*pb.Reservation, error) {
	if r.refuse != nil {
		return nil, r.refuse
	}
	r.reserved[req.GetOwnerUid()] = req
	return &pb.Reservation{OwnerUid: req.GetOwnerUid(), PortIds: req.GetPortIds(),
		HclDir: "/run/rocenet/hcl/claim-" + req.GetOwnerUid(), HclFiles: []string{"gaudinet.json"}}, nil
}

func (r *reservingDaemon) Release(_ context.Context, req *pb.ReleaseRequest, _ ...grpc.CallOption) (*pb.ReleaseResponse, error) {
	r.released = append(r.released, req.GetOwnerUid())
	return &pb.ReleaseResponse{}, nil
}

func allocatedClaim(uid, pool string, devices ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "c-" + uid, UID: types.UID(uid)}}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for _, d := range devices {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourceapi.DeviceRequestAllocationResult{Request: "port", Driver: "rocenet.io", Pool: pool, Device: d})
	}
	// Another driver's device in the same claim is not ours to prepare.
	c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
		resourceapi.DeviceRequestAllocationResult{Request: "gaudi", Driver: "gaudi.intel.com", Pool: pool, Device: "gaudi-0"})
	c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "pod-" + types.UID(uid)}}
	return c
}

func newPrepareDriver(t *testing.T, r *reservingDaemon) (*Driver, string) {
	t.Helper()
	cdi := t.TempDir()
	daemon := &Daemon{Reservations: r, Follower: nodestream.New("", nil, clock.RealClock{})}
	d := New(Options{DriverName: "rocenet.io", NodeName: "node1", CDIDir: cdi, RDMA: RDMANonGaudi, CallTimeout: time.Second}, daemon, nil, nil)
	return d, cdi
}

func TestPrepareReservesAndWritesTheSpec(t *testing.T) {
	r := &reservingDaemon{reserved: map[string]*pb.ReserveRequest{}}
	d, cdi := newPrepareDriver(t, r)
	claims := []*resourceapi.ResourceClaim{allocatedClaim("u1", "node1", "0000-19-00-0-p1")}
	if _, err := d.PrepareResourceClaims(context.Background(), claims); err == nil {
		t.Fatal("prepared before rocenetd sent the node's ports")
	}
	d.daemon.Publish(snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1), gaudiPort("0000:19:00.0-p2", "hl0p2", 2)))
	for i := 0; i < 2; i++ { // kubelet may ask again: the same answer
		results, err := d.PrepareResourceClaims(context.Background(), claims)
		if err != nil || results["u1"].Err != nil {
			t.Fatalf("prepare: %v %v", err, results["u1"].Err)
		}
		devs := results["u1"].Devices
		if len(devs) != 1 || devs[0].DeviceName != "0000-19-00-0-p1" || devs[0].PoolName != "node1" ||
			devs[0].CDIDeviceIDs[0] != "rocenet.io/port=u1-0000-19-00-0-p1" || devs[0].Requests[0] != "port" {
			t.Errorf("devices %+v", devs)
		}
	}
	req := r.reserved["u1"]
	if req.GetOwner() != "ml/c-u1" || strings.Join(req.GetPortIds(), ",") != "0000:19:00.0-p1" ||
		strings.Join(req.GetPodUids(), ",") != "pod-u1" {
		t.Errorf("reserve request %+v", req)
	}
	data, err := os.ReadFile(CDISpecPath(cdi, "u1"))
	if err != nil {
		t.Fatal(err)
	}
	var spec cdispec.Spec
	if err := json.Unmarshal(data, &spec); err != nil || len(spec.ContainerEdits.Mounts) != 1 ||
		spec.ContainerEdits.Mounts[0].HostPath != "/run/rocenet/hcl/claim-u1" {
		t.Errorf("spec %s (%v)", data, err)
	}
	results, _ := d.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: "u1"}})
	if results["u1"] != nil || len(r.released) != 1 {
		t.Errorf("unprepare %v, released %v", results, r.released)
	}
	if _, err := os.Stat(CDISpecPath(cdi, "u1")); !os.IsNotExist(err) {
		t.Errorf("spec left after unprepare: %v", err)
	}
}

func TestPrepareRefusesWhatIsNotThisNodesOrRocenetdRefuses(t *testing.T) {
	r := &reservingDaemon{reserved: map[string]*pb.ReserveRequest{}}
	d, cdi := newPrepareDriver(t, r)
	d.daemon.Publish(snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1)))
	claims := []*resourceapi.ResourceClaim{
		allocatedClaim("other-pool", "node2", "0000-19-00-0-p1"),
		allocatedClaim("gone", "node1", "0000-29-00-0-p8"),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "unallocated", UID: "unallocated"}},
	}
	results, err := d.PrepareResourceClaims(context.Background(), claims)
	if err != nil {
		t.Fatal(err)
	}
	for uid, want := range map[types.UID]string{
		"other-pool":  "not of this node's pool node1",
		"gone":        "not a port of this node",
		"unallocated": "not allocated",
	} {
		if results[uid].Err == nil || !strings.Contains(results[uid].Err.Error(), want) {
			t.Errorf("%s: %v, want %q", uid, results[uid].Err, want)
		}
	}
	r.refuse = status.Error(codes.FailedPrecondition, "port 0000:19:00.0-p1 (hl0p1) is attached to pod ml/x")
	results, _ = d.PrepareResourceClaims(context.Background(), []*resourceapi.ResourceClaim{allocatedClaim("u2", "node1", "0000-19-00-0-p1")})
	if err := results["u2"].Err; err == nil || status.Code(errors.Unwrap(err)) != codes.FailedPrecondition ||
		!strings.Contains(err.Error(), "claim ml/c-u2: rocenetd did not reserve 0000:19:00.0-p1") {
		t.Errorf("refused reserve: %v", err)
	}
	if entries, _ := os.ReadDir(cdi); len(entries) != 0 {
		t.Errorf("a spec written for a refused claim: %v", entries)
	}
	if len(r.reserved) != 0 {
		t.Errorf("reserved %v", r.reserved)
	}
}

// rdma_cm goes into a claim's spec only on a node whose sysfs shows it
// (rdma_ucm loaded): a device node that does not exist would keep the
// container from starting.
func TestPrepareGivesRdmaCMOnlyWhenTheNodeHasIt(t *testing.T) {
	for _, loaded := range []bool{false, true} {
		sysfs := t.TempDir()
		if loaded {
			if err := os.MkdirAll(filepath.Join(sysfs, "class/misc/rdma_cm"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		r := &reservingDaemon{reserved: map[string]*pb.ReserveRequest{}}
		cdi := t.TempDir()
		daemon := &Daemon{Reservations: r, Follower: nodestream.New("", nil, clock.RealClock{})}
		d := New(Options{DriverName: "rocenet.io", NodeName: "node1", CDIDir: cdi, RDMA: RDMAAll,
			SysfsRoot: sysfs, CallTimeout: time.Second}, daemon, nil, nil)
		d.daemon.Publish(snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1)))
		claims := []*resourceapi.ResourceClaim{allocatedClaim("u1", "node1", "0000-19-00-0-p1")}
		if results, err := d.PrepareResourceClaims(context.Background(), claims); err != nil || results["u1"].Err != nil {
			t.Fatalf("prepare: %v %v", err, results["u1"].Err)
		}
		data, err := os.ReadFile(CDISpecPath(cdi, "u1"))
		if err != nil {
			t.Fatal(err)
		}
		var spec cdispec.Spec
		if err := json.Unmarshal(data, &spec); err != nil || len(spec.Devices) != 1 {
			t.Fatalf("spec %s (%v)", data, err)
		}
		var nodes []string
		for _, n := range spec.Devices[0].ContainerEdits.DeviceNodes {
			nodes = append(nodes, n.Path)
		}
		want := "/dev/infiniband/uverbs0"
		if loaded {
			want += ",/dev/infiniband/rdma_cm"
		}
		if got := strings.Join(nodes, ","); got != want {
			t.Errorf("rdma_ucm loaded %v: device nodes %s, want %s", loaded, got, want)
		}
	}
}
