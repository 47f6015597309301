// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"k8s.io/utils/clock"

	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// fakeDaemon answers the driver's calls to rocenetd from memory.
type fakeDaemon struct {
	pb.ReservationsClient
	pb.AttachmentsClient
	reservations []*pb.Reservation
	attachments  []*pb.Attachment
	released     []string
}

func (f *fakeDaemon) List(context.Context, *pb.ListReservationsRequest, ...grpc.CallOption) (*pb.ListReservationsResponse, error) {
	return &pb.ListReservationsResponse{Reservations: f.reservations}, nil
}

func (f *fakeDaemon) Release(_ context.Context, r *pb.ReleaseRequest, _ ...grpc.CallOption) (*pb.ReleaseResponse, error) {
	f.released = append(f.released, r.GetOwnerUid())
	return &pb.ReleaseResponse{Released: true}, nil
}

type fakeAttachments struct {
	pb.AttachmentsClient
	f *fakeDaemon
}

func (a fakeAttachments) List(context.Context, *pb.ListAttachmentsRequest, ...grpc.CallOption) (*pb.ListAttachmentsResponse, error) {
	return &pb.ListAttachmentsResponse{Attachments: a.f.attachments}, nil
}

func TestSyncWritesNetworkDataAndReleasesDeletedClaims(t *testing.T) {
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "job-0-net", UID: "uid-live"}}
	kube := fake.NewSimpleClientset(claim)
	cdi := t.TempDir()
	f := &fakeDaemon{
		reservations: []*pb.Reservation{
			{OwnerUid: "uid-live", Owner: "ml/job-0-net", PodUids: []string{"pod-1"}, PortIds: []string{"0000:19:00.0-p1"}},
			{OwnerUid: "uid-gone", Owner: "ml/deleted", PodUids: []string{"pod-2"}, PortIds: []string{"0000:19:00.0-p2"}},
			// Same name as the live claim, but an older claim's UID.
			{OwnerUid: "uid-old", Owner: "ml/job-0-net", PortIds: []string{"0000:19:00.0-p3"}},
		},
		attachments: []*pb.Attachment{{PortId: "0000:19:00.0-p1", State: "attached", Ifname: "net1", Mac: "b0:fd:0b:00:00:01",
			Ips: []*pb.IpConfig{{Address: "10.200.10.1/30"}}, Pod: &pb.PodIdentity{Namespace: "ml", Name: "job-0", Uid: "pod-1"}}},
	}
	if err := WriteCDISpec(cdi, "uid-gone", ClaimSpec("uid-gone", nil, RDMANone, HCLFiles{}, true)); err != nil {
		t.Fatal(err)
	}
	d := New(Options{DriverName: "rocenet.io", NodeName: "node1", CDIDir: cdi, CallTimeout: time.Second},
		&Daemon{Reservations: f, Attachments: fakeAttachments{f: f}, Follower: nodestream.New("", nil, clock.RealClock{})}, kube, nil)
	written := map[string][]resourceapi.AllocatedDeviceStatus{}
	if err := d.syncNetworkData(context.Background(), written); err != nil {
		t.Fatal(err)
	}
	got, err := kube.ResourceV1().ResourceClaims("ml").Get(context.Background(), "job-0-net", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Devices) != 1 || got.Status.Devices[0].NetworkData.InterfaceName != "net1" {
		t.Errorf("claim status %+v", got.Status.Devices)
	}
	if len(f.released) != 2 || f.released[0] != "uid-gone" || f.released[1] != "uid-old" {
		t.Errorf("released %v, want the deleted claim's and the older claim's", f.released)
	}
	if _, err := os.Stat(CDISpecPath(cdi, "uid-gone")); !os.IsNotExist(err) {
		t.Errorf("the deleted claim's CDI spec is still there: %v", err)
	}
	// Nothing changed: no second write.
	updates := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "update" {
			updates++
		}
	}
	if err := d.syncNetworkData(context.Background(), written); err != nil {
		t.Fatal(err)
	}
	after := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "update" {
			after++
		}
	}
	if updates != 1 || after != 1 {
		t.Errorf("status updates: %d, then %d", updates, after)
	}
}
