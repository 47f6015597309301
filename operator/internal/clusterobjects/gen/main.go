// SPDX-License-Identifier: Apache-2.0

// Command gen writes the objects each platform's kustomize overlays render
// that the operator makes at run time (clusterobjects.Kinds) to
// OUT/<platform>.yaml.
//
//	go run ./gen OVERLAYS OUT
//
// ROCENET_KUBECTL names kubectl (default: kubectl on PATH).
package main

import (
	"cmp"
	"fmt"
	"os"

	"rocenet.io/operator/internal/clusterobjects"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen OVERLAYS OUT")
		os.Exit(2)
	}
	kubectl := cmp.Or(os.Getenv("ROCENET_KUBECTL"), "kubectl")
	for _, platform := range clusterobjects.Platforms {
		out, err := clusterobjects.Render(kubectl, os.Args[1], platform)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(fmt.Sprintf("%s/%s.yaml", os.Args[2], platform.Name), out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
