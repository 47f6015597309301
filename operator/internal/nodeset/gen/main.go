// SPDX-License-Identifier: Apache-2.0

// Command gen writes the DaemonSet "rocenet" of each kustomize overlay
// (kubectl kustomize OVERLAYS/<name>) to OUT/<name>.yaml.
//
//	go run ./gen OVERLAYS OUT
//
// ROCENET_KUBECTL names kubectl (default: kubectl on PATH).
package main

import (
	"fmt"
	"os"

	"rocenet.io/operator/internal/nodeset"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen OVERLAYS OUT")
		os.Exit(2)
	}
	kubectl := os.Getenv("ROCENET_KUBECTL")
	if kubectl == "" {
		kubectl = "kubectl"
	}
	for _, overlay := range nodeset.Overlays {
		out, err := nodeset.RenderOverlay(kubectl, os.Args[1], overlay)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(fmt.Sprintf("%s/%s.yaml", os.Args[2], overlay), out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
