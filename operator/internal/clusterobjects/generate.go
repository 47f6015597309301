// SPDX-License-Identifier: Apache-2.0

package clusterobjects

// manifests/ holds each platform's objects as its kustomize overlays of
// packaging/kubernetes/node render them: written by `go generate ./operator/...`
// (gen/, with kubectl's kustomize); a test fails while they are stale.
//go:generate go run ./gen ../../../packaging/kubernetes/node manifests
