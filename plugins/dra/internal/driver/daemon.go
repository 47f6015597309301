// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"

	pb "rocenet.io/dra-plugin/internal/rocenetpb"
)

// Daemon is the plugin's link to rocenetd: the node stream (every port,
// its health and plan, in one consistent snapshot) and the calls that
// change rocenetd's state. The plugin keeps nothing rocenetd does not have:
// the latest snapshot is all it holds.
type Daemon struct {
	conn         *grpc.ClientConn
	ports        pb.PortDiscoveryClient
	Reservations pb.ReservationsClient
	Attachments  pb.AttachmentsClient

	mu      sync.Mutex
	latest  *pb.PortSnapshot
	changed chan struct{} // closed and replaced on every new snapshot
}

// DialDaemon makes the client of rocenetd's unix socket. It does not wait
// for rocenetd: calls fail (UNAVAILABLE) until it listens.
func DialDaemon(socket string) (*Daemon, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("rocenetd socket %s: %w", socket, err)
	}
	return &Daemon{
		conn:         conn,
		ports:        pb.NewPortDiscoveryClient(conn),
		Reservations: pb.NewReservationsClient(conn),
		Attachments:  pb.NewAttachmentsClient(conn),
		changed:      make(chan struct{}),
	}, nil
}

// Close closes the connection.
func (d *Daemon) Close() error { return d.conn.Close() }

// Latest is the newest snapshot, with a channel that is closed when a newer
// one arrives; nil before the first.
func (d *Daemon) Latest() (*pb.PortSnapshot, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.latest, d.changed
}

func (d *Daemon) publish(snapshot *pb.PortSnapshot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.latest = snapshot
	close(d.changed)
	d.changed = make(chan struct{})
}

// Watch follows rocenetd's node stream until ctx ends, subscribing again
// after every break (rocenetd restarting, or replaced in a rolling update)
// after `retry`. The last snapshot stays current meanwhile: the ports do not
// change because rocenetd is away, and the health reports that stop going
// out let kubelet mark them Unknown when it lasts.
func (d *Daemon) Watch(ctx context.Context, retry time.Duration) {
	logger := klog.FromContext(ctx)
	for ctx.Err() == nil {
		stream, err := d.ports.WatchPorts(ctx, &pb.WatchPortsRequest{}, grpc.WaitForReady(true))
		if err == nil {
			for {
				var snapshot *pb.PortSnapshot
				snapshot, err = stream.Recv()
				if err != nil {
					break
				}
				d.publish(snapshot)
			}
		}
		if ctx.Err() != nil {
			return
		}
		logger.Info("rocenetd's node stream broke; subscribing again", "err", err, "retry", retry)
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}
