// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// resourceOf is the resource (and subresource) of an API path, as the API
// server's apiserver_request_total names them: "nodes/status" for
// /api/v1/nodes/n1/status, "rocenetnodes" for a create of
// /apis/rocenet.io/v1alpha1/rocenetnodes; the discovery paths as they are.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return path
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

// isWrite: a request that changes an object (what the API server stores).
func isWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// progress is what one node's client has done, for the schedule to wait
// on: its reporter's first reads and first writes of each object.
type progress struct {
	reads            atomic.Int32
	rnodeWritten     atomic.Bool
	conditionWritten atomic.Bool
}

// counter counts every request of every reporter's client: writes and
// throttled requests per second by "VERB resource", requests in all, and
// failures.
type counter struct {
	connections atomic.Int64

	mu sync.Mutex
	// By second, then "VERB resource": the writes the API server took, and
	// the requests it turned away with 429 (a write among them is sent
	// again, and counted again).
	writes    map[int64]map[string]int
	throttled map[int64]map[string]int
	requests  map[string]int
	errors    map[string]int
}

func newCounter() *counter {
	return &counter{writes: map[int64]map[string]int{}, throttled: map[int64]map[string]int{},
		requests: map[string]int{}, errors: map[string]int{}}
}

func add(counts map[int64]map[string]int, second int64, key string) {
	if counts[second] == nil {
		counts[second] = map[string]int{}
	}
	counts[second][key]++
}

// dial is dial, counting the connections it makes.
func (c *counter) dial(dial func(ctx context.Context, network, address string) (net.Conn, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err == nil {
			c.connections.Add(1)
		}
		return conn, err
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wrap counts rt's requests, and node's progress.
func (c *counter) wrap(rt http.RoundTripper, node *progress) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		key := req.Method + " " + resourceOf(req.URL.Path)
		second := time.Now().Unix()
		resp, err := rt.RoundTrip(req)
		failure := ""
		switch {
		case err != nil && req.Context().Err() != nil:
			// A reporter stopped by the schedule: not the API's failure.
		case err != nil:
			failure = "transport error"
		case resp.StatusCode == http.StatusNotFound && req.Method == http.MethodGet:
			// A seed reporter's first read of a RocenetNode not yet made.
		case resp.StatusCode == http.StatusTooManyRequests:
			// API Priority and Fairness turned it away; client-go waits
			// its Retry-After and sends it again, unseen by the reporter.
		case resp.StatusCode >= 400:
			failure = fmt.Sprint(resp.StatusCode)
		}
		throttled := err == nil && resp.StatusCode == http.StatusTooManyRequests
		c.mu.Lock()
		c.requests[key]++
		switch {
		case throttled:
			add(c.throttled, second, key)
		case isWrite(req.Method):
			add(c.writes, second, key)
		}
		if failure != "" {
			c.errors[key+" "+failure]++
		}
		c.mu.Unlock()
		if err == nil && resp.StatusCode < 400 {
			switch key {
			case "GET nodes", "GET rocenetnodes":
				node.reads.Add(1)
			case "PUT rocenetnodes/status":
				node.rnodeWritten.Store(true)
			case "PATCH nodes/status":
				node.conditionWritten.Store(true)
			}
		}
		return resp, err
	})
}

// phaseMark is when a phase of the schedule started (Unix seconds, just
// after a whole one).
type phaseMark struct {
	Name  string  `json:"name"`
	Start float64 `json:"start"`
}

// second is one second's writes, and requests turned away with 429, by
// "VERB resource".
type second struct {
	T         int64          `json:"t"`
	Writes    map[string]int `json:"writes"`
	Throttled map[string]int `json:"throttled,omitempty"`
}

// usage is the process's own peak RSS and CPU time.
type usage struct {
	MaxRSSKiB     int64   `json:"maxRssKiB"`
	UserSeconds   float64 `json:"userSeconds"`
	SystemSeconds float64 `json:"systemSeconds"`
}

// timeline is the load program's record of a run, written as JSON: the
// phases' starts and every second's writes from the first phase to the
// end, so that rates per phase are computed from it.
type timeline struct {
	Nodes         int               `json:"nodes"`
	PortsPerNode  int               `json:"portsPerNode"`
	Rails         int               `json:"rails"`
	Rail          int               `json:"rail"`
	FlappingNodes int               `json:"flappingNodes"`
	Connections   int64             `json:"connections"`
	Phases        []phaseMark       `json:"phases"`
	Seconds       []second          `json:"seconds"`
	Requests      map[string]int    `json:"requests"`
	Errors        map[string]int    `json:"errors"`
	Process       usage             `json:"process"`
	Options       map[string]string `json:"options"`
}

// mark starts phase name at the next whole second, so that the seconds
// counted are the phases': none holds the end of one and the start of the
// next. It returns early (with the phase started now) when ctx ends.
func (t *timeline) mark(ctx context.Context, name string) {
	now := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(now.Truncate(time.Second).Add(time.Second).Sub(now)):
	}
	now = time.Now()
	t.Phases = append(t.Phases, phaseMark{Name: name, Start: float64(now.UnixNano()) / 1e9})
	fmt.Fprintf(os.Stderr, "fleet-load: %s at %s\n", name, now.Format("15:04:05.000"))
}

// finish fills in the counts, from the first phase's second to now.
func (t *timeline) finish(c *counter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Connections = c.connections.Load()
	t.Requests, t.Errors = c.requests, c.errors
	if len(t.Phases) > 0 {
		for s := int64(t.Phases[0].Start); s <= time.Now().Unix(); s++ {
			t.Seconds = append(t.Seconds, second{T: s, Writes: c.writes[s], Throttled: c.throttled[s]})
		}
	}
	sort.Slice(t.Seconds, func(i, j int) bool { return t.Seconds[i].T < t.Seconds[j].T })
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		t.Process = usage{
			MaxRSSKiB:     ru.Maxrss,
			UserSeconds:   time.Duration(ru.Utime.Nano()).Seconds(),
			SystemSeconds: time.Duration(ru.Stime.Nano()).Seconds(),
		}
	}
}

// write puts the timeline into path whole or not at all.
func (t *timeline) write(path string) error {
	data, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fleet-load-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
