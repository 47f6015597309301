// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	. "rocenet.io/plugins/internal/nodestream/nodestreamtest"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// Two ports: the first healthy, the second with its link down (snapshot()
// makes the second port of a snapshot unhealthy).
func twoPorts() *pb.PortSnapshot {
	return snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1), gaudiPort("0000:19:00.0-p2", "hl0p2", 2))
}

func healthDriver(node Node, clk *TimerClock) *Driver {
	return &Driver{opts: Options{NodeName: "node1", HealthTimeout: 30 * time.Second}, node: node, clock: clk}
}

// health is each device's health in a report, by device name.
func health(r kubeletplugin.DeviceHealthReport) map[string]kubeletplugin.HealthStatus {
	out := map[string]kubeletplugin.HealthStatus{}
	for _, d := range r.Devices {
		out[d.DeviceName] = d.Health
	}
	return out
}

func wantHealth(t *testing.T, r kubeletplugin.DeviceHealthReport, want map[string]kubeletplugin.HealthStatus) {
	t.Helper()
	got := health(r)
	if len(got) != len(want) {
		t.Fatalf("report %+v, want %v", r.Devices, want)
	}
	for name, h := range want {
		if got[name] != h {
			t.Errorf("device %s: %q, want %q (report %+v)", name, got[name], h, r.Devices)
		}
	}
}

var rocenetdsHealth = map[string]kubeletplugin.HealthStatus{
	"0000-19-00-0-p1": kubeletplugin.HealthStatusHealthy,
	"0000-19-00-0-p2": kubeletplugin.HealthStatusUnhealthy,
}

var unknown = map[string]kubeletplugin.HealthStatus{
	"0000-19-00-0-p1": kubeletplugin.HealthStatusUnknown,
	"0000-19-00-0-p2": kubeletplugin.HealthStatusUnknown,
}

func TestHealthIsSentFromTheFirstSnapshotOnAndAgainEveryThirdOfTheTimeout(t *testing.T) {
	node := NewFakeNode(NodeState{})
	clk := NewTimerClock()
	d := healthDriver(node, clk)
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan kubeletplugin.DeviceHealthReport)
	done := Running(func() { _ = d.WatchHealthStatus(ctx, reports) })

	// Before rocenetd's first snapshot there is nothing to report, not even
	// when the node changes (rocenetd not reached). Each pass of the loop
	// sets a timer: one set after a change means the change was seen (and
	// that nothing was sent: nobody reads the reports yet).
	clk.NextTimer(t)
	node.Set(NodeState{Lost: &Lost{Since: Start, Reason: "connection refused"}})
	clk.NextTimer(t)
	node.Set(NodeState{Snapshot: twoPorts()})
	first := Receive(t, reports, "health report")
	wantHealth(t, first, rocenetdsHealth)
	for _, h := range first.Devices {
		if h.PoolName != "node1" || h.HealthCheckTimeout != 30*time.Second || !h.LastUpdated.Equal(clk.Now()) {
			t.Errorf("device health %+v", h)
		}
		if h.Health == kubeletplugin.HealthStatusUnhealthy && h.Message != "rocenetd: LinkDown" {
			t.Errorf("unhealthy device's message %q", h.Message)
		}
	}

	// Nothing changes: the same health again a third of the timeout later,
	// stamped with the time it is sent, so kubelet's copy never goes stale.
	for range 2 {
		if wait := clk.NextTimer(t); wait != 10*time.Second {
			t.Fatalf("the report is re-sent after %s, want a third of the 30s timeout", wait)
		}
		clk.Step(10 * time.Second)
		again := Receive(t, reports, "re-sent health report")
		wantHealth(t, again, rocenetdsHealth)
		if !again.Devices[0].LastUpdated.Equal(clk.Now()) {
			t.Errorf("re-sent report stamped %s, want %s", again.Devices[0].LastUpdated, clk.Now())
		}
	}

	// A change is sent at once, and the next re-send is a third of the
	// timeout after it.
	clk.NextTimer(t)
	clk.Step(4 * time.Second)
	healed := twoPorts()
	healed.Health.Ports[1].Healthy = true
	node.Set(NodeState{Snapshot: healed})
	changed := Receive(t, reports, "report of the change")
	wantHealth(t, changed, map[string]kubeletplugin.HealthStatus{
		"0000-19-00-0-p1": kubeletplugin.HealthStatusHealthy,
		"0000-19-00-0-p2": kubeletplugin.HealthStatusHealthy,
	})
	if wait := clk.NextTimer(t); wait != 10*time.Second {
		t.Errorf("re-send %s after a change, want 10s", wait)
	}
	cancel()
	Ends(t, done, "WatchHealthStatus")
}

func TestHealthIsUnknownWithTheReasonWhileRocenetdIsLost(t *testing.T) {
	ports := twoPorts()
	node := NewFakeNode(NodeState{Snapshot: ports})
	clk := NewTimerClock()
	d := healthDriver(node, clk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan kubeletplugin.DeviceHealthReport)
	done := Running(func() { _ = d.WatchHealthStatus(ctx, reports) })
	wantHealth(t, Receive(t, reports, "health report"), rocenetdsHealth)

	// Daemon.Watch found rocenetd away past the grace: every port Unknown at
	// once (not when kubelet's copy goes stale), saying why; the slice's
	// ports are the last snapshot's still.
	since := Start.Add(-31 * time.Second)
	node.Set(NodeState{Snapshot: ports, Lost: &Lost{Since: since, Reason: "connection error: connect: connection refused"}})
	lost := Receive(t, reports, "report of rocenetd lost")
	wantHealth(t, lost, unknown)
	for _, h := range lost.Devices {
		if !strings.Contains(h.Message, "rocenetd unreachable since 2026-03-01T11:59:29Z") ||
			!strings.Contains(h.Message, "connect: connection refused") {
			t.Errorf("device %s: message %q, want since when and why rocenetd is unreachable", h.DeviceName, h.Message)
		}
		if !h.LastUpdated.Equal(clk.Now()) || h.HealthCheckTimeout != 30*time.Second {
			t.Errorf("device health %+v", h)
		}
	}

	// Re-sent as Unknown, never Healthy, as long as rocenetd is away.
	clk.NextTimer(t) // stopped by the change
	clk.Step(clk.NextTimer(t))
	wantHealth(t, Receive(t, reports, "re-sent report"), unknown)

	// rocenetd back: its health again, at once.
	node.Set(NodeState{Snapshot: ports})
	wantHealth(t, Receive(t, reports, "report of rocenetd back"), rocenetdsHealth)
	cancel()
	Ends(t, done, "WatchHealthStatus")
}

func TestWatchHealthStatusEndsWithItsContext(t *testing.T) {
	for name, reading := range map[string]bool{
		// Kubelet stopped reading: the send must not block.
		"while sending": false,
		"while waiting": true,
	} {
		t.Run(name, func(t *testing.T) {
			clk := NewTimerClock()
			d := healthDriver(NewFakeNode(NodeState{Snapshot: twoPorts()}), clk)
			ctx, cancel := context.WithCancel(context.Background())
			reports := make(chan kubeletplugin.DeviceHealthReport)
			var err error
			done := Running(func() { err = d.WatchHealthStatus(ctx, reports) })
			if reading {
				Receive(t, reports, "health report")
				clk.NextTimer(t)
			}
			cancel()
			Ends(t, done, "WatchHealthStatus")
			if err != nil {
				t.Errorf("WatchHealthStatus: %v, want nil when its context ends", err)
			}
		})
	}
}
