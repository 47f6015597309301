#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the real components the end-to-end tests run against, from their Go
# modules at the versions pinned in tests/k8s/components/*/go.mod and go.sum:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kubectl, containerd 2 (with its runc shim and ctr), Multus' thin plugin
# and its thick plugin (multus-daemon, multus-shim), plus Multus'
# NetworkAttachmentDefinition CRD and the thick daemon's ClusterRole
# (multus-clusterrole.yaml), helm (for the packaging tests, which render
# the Helm chart), and kwok with the node stages it runs
# (kwok-stages.yaml: Nodes made Ready and kept so with Leases, for the fleet
# benchmark, tests/fleet/), the JobSet controller with its CRD and webhook
# configurations (jobset-crd.yaml, jobset-webhooks.yaml), Kubeflow
# Trainer's controller (components/trainer/main.go) with its CRDs, webhook
# configuration and MPI runtime (trainer-crds.yaml, trainer-webhooks.yaml,
# trainer-mpi-runtime.yaml), Kubeflow's training operator v1
# (components/training-operator/main.go: its PyTorchJob controller) with
# the PyTorchJob CRD (pytorchjob-crd.yaml), and CoreDNS with the plugins
# the cluster DNS needs (components/coredns/main.go), for the jobs of the
# tests on several nodes. runc is Debian's.
#
#   tests/k8s/components.sh [BIN_DIR [COMPONENT...]]
#
# Each component is built once into a cache outside the source tree, under a
# key made of its go.mod, go.sum, build flags and Go version, and reused
# while the key holds; a build that fails or is interrupted leaves nothing
# behind. With BIN_DIR, every program (and the YAML files named above) is
# linked there; without, the cache's directories are printed. With
# COMPONENT... (names of tests/k8s/components/), only those. The time of
# each build, or that it came from the cache, goes to stderr.
#
#   ROCENET_CACHE  the cache (default /var/cache/rocenet): components/<name>-<key>/
#                  holds the programs; go/mod and go/build the Go module and
#                  build caches, so a new key rebuilds only what changed
#
# Needs go (1.26) and the Go module proxy; downloads nothing else.
set -euo pipefail
# A failed build inside $(build ...) must stop the script, not be cached.
shopt -s inherit_errexit

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ROCENET_CACHE:-/var/cache/rocenet}"
bin_dir="${1:-}"
only=("${@:2}")
for name in "${only[@]}"; do
  [ -f "$here/components/$name/go.mod" ] || { echo "components.sh: no component $name" >&2; exit 2; }
done

command -v go >/dev/null || { echo "components.sh: go is not installed" >&2; exit 2; }
export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" GOFLAGS=-mod=readonly
export CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$cache/components" "$GOMODCACHE" "$GOCACHE"
# Half-built components, removed however the script ends.
unfinished=()
trap 'rm -rf "${unfinished[@]}"' EXIT

# The version a module of component $1 requires, from its go.mod.
required() {
  (cd "$here/components/$1" && go list -m -f '{{.Version}}' "$2")
}

# build NAME FLAGS... -- PACKAGE...: the programs of PACKAGE... into the
# cache, unless there already; prints the cache directory.
build() {
  local name=$1
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then
    return
  fi
  shift
  local flags=()
  while [ "$1" != "--" ]; do
    flags+=("$1")
    shift
  done
  shift
  local key
  key="$( (cat "$here/components/$name/go.mod" "$here/components/$name/go.sum"
    # A component of its own code (coredns', trainer's and
    # training-operator's main.go, the CRI-O node's NRI plugin).
    find "$here/components/$name" -name '*.go' | sort | xargs -r cat
    printf '%s\n' "${flags[@]}" "$@"
    go version) | sha256sum | cut -c1-12)"
  local dir="$cache/components/$name-$key"
  if [ -f "$dir/.complete" ]; then
    echo "components: $name from the cache ($dir)" >&2
    echo "$dir"
    return
  fi
  local work
  work="$(mktemp -d "$cache/components/.$name.XXXXXX")"
  unfinished+=("$work")
  local start=$SECONDS
  if [ "$name" = crio ]; then
    # CRI-O needs cgo (its storage and namespace code).
    (cd "$here/components/$name" && CGO_ENABLED=1 go build -trimpath "${flags[@]}" -o "$work/" "$@") >&2
  else
    (cd "$here/components/$name" && go build -trimpath "${flags[@]}" -o "$work/" "$@") >&2
  fi
  # etcd's server module is its main package: go names the program "server".
  if [ "$name" = etcd ]; then mv "$work/server" "$work/etcd"; fi
  if [ "$name" = multus ]; then
    # The CRD, from the same module: the first document of the thin
    # DaemonSet's manifest that defines it.
    local module
    module="$(cd "$here/components/multus" && go list -m -f '{{.Dir}}' gopkg.in/k8snetworkplumbingwg/multus-cni.v4)"
    python3 - "$module/deployments/multus-daemonset.yml" "$work/nad-crd.yaml" <<'EOF'
import sys
docs = open(sys.argv[1]).read().split("\n---")
crd = [d for d in docs if "kind: CustomResourceDefinition" in d]
if len(crd) != 1:
    sys.exit(f"{sys.argv[1]}: {len(crd)} CustomResourceDefinition documents, not one")
open(sys.argv[2], "w").write(crd[0].strip("-\n") + "\n")
EOF
    # The thick plugin's ClusterRole (its daemon's rights), from its manifest.
    python3 - "$module/deployments/multus-daemonset-thick.yml" "$work/multus-clusterrole.yaml" <<'EOF'
import sys
import yaml
roles = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole"]
if len(roles) != 1:
    sys.exit(f"{sys.argv[1]}: {len(roles)} ClusterRoles, not one")
yaml.safe_dump(roles[0], open(sys.argv[2], "w"), sort_keys=False)
EOF
  fi
  if [ "$name" = kwok ]; then
    # The node stages kwokctl gives kwok by default (the kwok program has
    # none of its own): a Node made Ready at once, then its status renewed
    # with a Lease, as a kubelet does.
    local module
    module="$(cd "$here/components/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
    { cat "$module/kustomize/stage/node/fast/node-initialize.yaml"
      echo "---"
      cat "$module/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml"
    } >"$work/kwok-stages.yaml"
  fi
  if [ "$name" = jobset ]; then
    # The CRD and the webhook configurations of the same module, as its
    # kustomization renders them: the pod webhooks only for JobSets' pods.
    local module
    module="$(cd "$here/components/jobset" && go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)"
    cp "$module/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$work/jobset-crd.yaml"
    python3 - "$module/config/components/webhook" "$work/jobset-webhooks.yaml" <<'EOF'
import sys
import yaml
webhook_dir, out = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(f"{webhook_dir}/manifests.yaml")) if d]
for doc, patch in zip(sorted(docs, key=lambda d: d["kind"]),
                      ("mutating-patch.yaml", "validating-patch.yaml"), strict=True):
    for op in yaml.safe_load(open(f"{webhook_dir}/patches/{patch}")):
        if op["op"] != "replace" or not op["path"].startswith("/webhooks/"):
            sys.exit(f"{patch}: an operation this script does not apply: {op}")
        doc["webhooks"][int(op["path"].rsplit("/", 1)[1])] = op["value"]
yaml.safe_dump_all(docs, open(out, "w"), sort_keys=False)
EOF
  fi
  if [ "$name" = crio ]; then
    # pinns, which CRI-O pins a pod's namespaces with: C, built with its
    # own Makefile from a writable copy of the module's pinns/.
    local module
    module="$(cd "$here/components/crio" && go list -m -f '{{.Dir}}' github.com/cri-o/cri-o)"
    mkdir -p "$work/src"
    cp -r "$module/pinns" "$work/src/pinns"
    chmod -R u+w "$work/src"
    make -s -C "$work/src/pinns" >&2
    mv "$work/src/bin/pinns" "$work/pinns"
    rm -rf "$work/src"
  fi
  if [ "$name" = trainer ]; then
    # Its CRDs, its validating webhooks (the API server calls them by URL:
    # the addon replaces each Service) and the MPI runtime it ships, which
    # the tests' TrainJob runs on.
    local module
    module="$(cd "$here/components/trainer" && go list -m -f '{{.Dir}}' github.com/kubeflow/trainer/v2)"
    for crd in "$module"/manifests/base/crds/trainer.kubeflow.org_*.yaml; do
      cat "$crd"
      echo "---"
    done >"$work/trainer-crds.yaml"
    cp "$module/manifests/base/webhook/manifests.yaml" "$work/trainer-webhooks.yaml"
    cp "$module/manifests/base/runtimes/mpi_distributed.yaml" "$work/trainer-mpi-runtime.yaml"
  fi
  if [ "$name" = training-operator ]; then
    # The PyTorchJob CRD of the same module.
    local module
    module="$(cd "$here/components/training-operator" &&
      go list -m -f '{{.Dir}}' github.com/kubeflow/training-operator)"
    cp "$module/manifests/base/crds/kubeflow.org_pytorchjobs.yaml" "$work/pytorchjob-crd.yaml"
  fi
  touch "$work/.complete"
  rm -rf "$dir"
  mv "$work" "$dir"
  echo "components: $name built in $((SECONDS - start)) s ($dir)" >&2
  echo "$dir"
}

started=$SECONDS
k8s="$(required kubernetes k8s.io/kubernetes)"
minor="${k8s#v1.}"
minor="${minor%%.*}"
stamp=()
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=("-X $pkg.gitVersion=$k8s" "-X $pkg.gitMajor=1" "-X $pkg.gitMinor=$minor"
    "-X $pkg.gitTreeState=clean")
done
ctd="$(required containerd github.com/containerd/containerd/v2)"
helm="$(required helm helm.sh/helm/v4)"
# One build an assignment: a failed one ends the script (in one array
# assignment, only the last substitution's status would count).
dirs=()
dirs+=("$(build kubernetes -ldflags "-s -w ${stamp[*]}" -- \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kubectl)")
dirs+=("$(build etcd -ldflags "-s -w" -- go.etcd.io/etcd/server/v3)")
dirs+=("$(build containerd -tags no_btrfs \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$ctd" -- \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr)")
dirs+=("$(build multus -ldflags "-s -w" -- gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus \
    gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus-daemon \
    gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus-shim)")
dirs+=("$(build helm -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm" -- \
    helm.sh/helm/v4/cmd/helm)")
dirs+=("$(build kwok -ldflags "-s -w" -- sigs.k8s.io/kwok/cmd/kwok)")
dirs+=("$(build jobset -ldflags "-s -w" -- sigs.k8s.io/jobset)")
dirs+=("$(build coredns -ldflags "-s -w" -- .)")
dirs+=("$(build trainer -ldflags "-s -w" -- .)")
dirs+=("$(build training-operator -ldflags "-s -w" -- .)")
# CRI-O, and the NRI plugin its node needs here (oomfloor/main.go).
dirs+=("$(build crio -tags "containers_image_ostree_stub exclude_graphdriver_btrfs containers_image_openpgp" \
  -ldflags "-s -w" -- github.com/cri-o/cri-o/cmd/crio ./oomfloor)")
# Without the components not asked for.
mapfile -t dirs < <(printf '%s\n' "${dirs[@]}" | grep .)
echo "components: all ready in $((SECONDS - started)) s" >&2

if [ -z "$bin_dir" ]; then
  printf '%s\n' "${dirs[@]}"
  exit 0
fi
mkdir -p "$bin_dir"
for dir in "${dirs[@]}"; do
  for file in "$dir"/*; do
    ln -sfn "$file" "$bin_dir/$(basename "$file")"
  done
done
exit 0
