// SPDX-License-Identifier: Apache-2.0

// Command oomfloor is an NRI plugin for the test cluster's CRI-O node: it
// raises a container's negative OOM score adjustment to 0. The machines
// the tests run on give root no CAP_SYS_RESOURCE, so no runtime may lower
// a process's score; containerd is told so (restrict_oom_score_adj), CRI-O
// has no such setting and passes the kubelet's score on.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

type floor struct{}

func (floor) CreateContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	adjust := &api.ContainerAdjustment{}
	if score := c.GetLinux().GetOomScoreAdj(); score != nil && score.GetValue() < 0 {
		zero := 0
		adjust.SetLinuxOomScoreAdj(&zero)
	}
	return adjust, nil, nil
}

func main() {
	socket := flag.String("socket", "", "the runtime's NRI socket")
	flag.Parse()
	s, err := stub.New(floor{}, stub.WithPluginName("oomfloor"), stub.WithPluginIdx("10"),
		stub.WithSocketPath(*socket))
	if err == nil {
		err = s.Run(context.Background())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "oomfloor: %v\n", err)
		os.Exit(1)
	}
}
