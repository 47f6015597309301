// SPDX-License-Identifier: Apache-2.0

package nodeset

// manifests/ holds rocenet's DaemonSet as each kustomize overlay of
// packaging/kubernetes/node renders it, the template a policy's DaemonSet is
// made from: written by `go generate ./operator/...` (gen/, with kubectl's
// kustomize); a test fails while they are stale.
//go:generate go run ./gen ../../../packaging/kubernetes/node manifests
