// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// freeAddress is a loopback address with a port free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Two replicas with leader election, as the Deployment runs them: one
// leads, and both are ready (their /readyz answers 200), the standby too,
// so that a rollout of the Deployment finishes.
func TestEnvtestAStandbyReplicaIsReady(t *testing.T) {
	cfg, _ := startAPIServer(t)
	ctx := context.Background()
	ctrllog.SetLogger(klog.NewKlogr())
	var probes []string
	var elected []<-chan struct{}
	for range 2 {
		probe := freeAddress(t)
		mgr, err := NewManager(cfg, ManagerOptions{LeaderElection: true, LeaderElectionNamespace: "rocenet-system",
			Namespace: "rocenet-system", MetricsBindAddress: "0", HealthProbeBindAddress: probe})
		if err != nil {
			t.Fatal(err)
		}
		run, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- mgr.Start(run) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
		probes = append(probes, probe)
		elected = append(elected, mgr.Elected())
	}
	ready := func(probe string) error {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s", resp.Status)
		}
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, probe := range probes {
		for err := ready(probe); err != nil; err = ready(probe) {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d is not ready: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	leaders := func() int {
		n := 0
		for _, e := range elected {
			select {
			case <-e:
				n++
			default:
			}
		}
		return n
	}
	for leaders() == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := leaders(); n != 1 {
		t.Errorf("%d of 2 replicas lead, want 1", n)
	}
}
