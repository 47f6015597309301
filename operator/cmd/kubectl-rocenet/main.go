// SPDX-License-Identifier: Apache-2.0

// kubectl-rocenet is `kubectl rocenet` and `oc rocenet`: rocenet's
// scale-out network across the cluster, from the RocenetCluster and
// RocenetNodes (docs/fleet.md#kubectl-rocenet). kubectl and oc run it
// when it is on PATH; krew installs it from packaging/krew/rocenet.yaml.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"rocenet.io/operator/internal/kubectlplugin"
)

// version is set by the build (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kubectlplugin.Run(ctx, os.Args[1:], kubectlplugin.Env{
		Streams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Connect: kubectlplugin.Connect,
		Version: version,
	})
	stop()
	os.Exit(code)
}
