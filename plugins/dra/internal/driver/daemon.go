// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	"k8s.io/utils/clock"

	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// The node as the driver follows it (package nodestream).
type (
	NodeState    = nodestream.State
	Lost         = nodestream.Lost
	Node         = nodestream.Node
	WatchOptions = nodestream.WatchOptions
)

// DefaultMaxRetry caps the backoff between subscriptions to the node
// stream (nodestream.DefaultMaxRetry).
const DefaultMaxRetry = nodestream.DefaultMaxRetry

// Daemon is the plugin's link to rocenetd: the node stream (every port,
// its health and plan, in one consistent snapshot; Watch follows it) and
// the calls that change rocenetd's state. The plugin keeps nothing
// rocenetd does not have: the latest snapshot is all it holds.
type Daemon struct {
	*nodestream.Follower
	conn         *grpc.ClientConn
	Reservations pb.ReservationsClient
	Attachments  pb.AttachmentsClient
}

// DialDaemon makes the client of rocenetd's unix socket (nodestream.Dial:
// it does not wait for rocenetd, and tries again at most `reconnect`
// apart while rocenetd is away).
func DialDaemon(socket string, reconnect time.Duration) (*Daemon, error) {
	conn, err := nodestream.Dial(socket, reconnect)
	if err != nil {
		return nil, fmt.Errorf("dialing rocenetd: %w", err)
	}
	return &Daemon{
		Follower:     nodestream.New(socket, pb.NewPortDiscoveryClient(conn), clock.RealClock{}),
		conn:         conn,
		Reservations: pb.NewReservationsClient(conn),
		Attachments:  pb.NewAttachmentsClient(conn),
	}, nil
}

// Close closes the connection.
func (d *Daemon) Close() error { return d.conn.Close() }
