#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, kwok) from Go modules into a cache directory outside the repository, keyed by the pinned
# versions; and the tests' tools: helm and Alertmanager from Go modules, prometheus and promtool from Debian's package,
# and Debian's Chromium for the dashboard's browser tests (scripts/browser.sh).
# A second run with the same pins finds the binaries and returns in well under a second.
#
# Prints the bin directory on the last line of stdout; progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

export GOTOOLCHAIN=local      # fail fast rather than silently downloading another toolchain
export CGO_ENABLED=0          # static binaries, no C toolchain needed
export GOFLAGS=-mod=mod

# The control plane's key covers versions.env up to its "# Tools" section: a tool's pin changes only that tool.
key=$(cat <(sed '/^# Tools$/,$d' "$here/versions.env") "$here/k8s/go.mod" "$here/k8s/go.sum" "$here/etcd/go.mod" "$here/etcd/go.sum" "$here/etcd/main.go" \
  | sha256sum | cut -c1-16)
cache_root=${ROLLOUT_GUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollout-guard}
bin="$cache_root/$key/bin"
mkdir -p "$bin"

start=$SECONDS
step() { printf '[cluster-build %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }

# Runs a long command while printing a heartbeat every 20 s, so a cold build is never minutes of silence.
with_heartbeat() {
  local label=$1; shift
  local t0=$SECONDS
  "$@" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      local gc; gc=$(du -sh "$(go env GOCACHE)" 2>/dev/null | cut -f1 || echo '?')
      step "  … $label still building ($((SECONDS - t0))s, go build cache $gc)"
    fi
  done
  wait "$pid"
}

have() { [ -x "$bin/$1" ]; }

# shellcheck source=debs.sh
source "$here/debs.sh"

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
V=k8s.io/component-base/version; C=k8s.io/client-go/pkg/version
ldflags="-s -w -X $V.gitVersion=$K8S_VERSION -X $V.gitMajor=1 -X $V.gitMinor=$minor -X $V.gitTreeState=clean \
-X $V.gitCommit=0000000000000000000000000000000000000000 -X $V.buildDate=1970-01-01T00:00:00Z \
-X $C.gitVersion=$K8S_VERSION -X $C.gitMajor=1 -X $C.gitMinor=$minor -X $C.gitTreeState=clean"

if have kube-apiserver && have kube-controller-manager && have kube-scheduler && have kubectl; then
  step "kubernetes $K8S_VERSION: cached"
else
  step "kubernetes $K8S_VERSION: building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (cold: ~20-30 min on 2 cores)"
  (cd "$here/k8s" && with_heartbeat kubernetes env GOBIN="$bin" go install -trimpath -ldflags "$ldflags" tool)
  step "kubernetes $K8S_VERSION: done"
fi

if have etcd; then
  step "etcd $ETCD_VERSION: cached"
else
  step "etcd $ETCD_VERSION: building"
  (cd "$here/etcd" && with_heartbeat etcd go build -trimpath -ldflags "-s -w" -o "$bin/etcd" .)
  step "etcd $ETCD_VERSION: done"
fi

if have kwok; then
  step "kwok $KWOK_VERSION: cached"
else
  step "kwok $KWOK_VERSION: building"
  (cd "$here" && with_heartbeat kwok env GOFLAGS= GOBIN="$bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
  step "kwok $KWOK_VERSION: done"
fi

# Tools: each in a directory named for its version, linked into $bin so that callers find one place.
tools="$cache_root/tools"
mkdir -p "$tools"

# go_tool NAME VERSION PACKAGE LDFLAGS COLD: builds NAME from its Go module at VERSION into a directory of
# its own, once, and links it into $bin. COLD says how long a cold build takes.
go_tool() {
  local name=$1 version=$2 pkg=$3 ldflags=$4 cold=$5
  local dir="$tools/$name-$version"
  if [ -x "$dir/$name" ]; then
    step "$name $version: cached"
  else
    step "$name $version: building (cold: $cold on 2 cores)"
    mkdir -p "$dir"
    (cd "$here" && with_heartbeat "$name" env GOFLAGS= GOBIN="$dir" go install -trimpath -ldflags "-s -w $ldflags" "$pkg@$version")
    step "$name $version: done"
  fi
  ln -sf "$dir/$name" "$bin/$name"
}

go_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "~4 min"

prom_version=$(basename "$PROMETHEUS_DEB" .deb)
prom_dir="$tools/$prom_version"
if [ -x "$prom_dir/prometheus" ] && [ -x "$prom_dir/promtool" ]; then
  step "prometheus ($prom_version): cached"
else
  step "prometheus ($prom_version): fetching Debian's package"
  tmp=$(mktemp -d)
  unpack_debs "$tmp/root" PROMETHEUS
  mkdir -p "$prom_dir"
  cp "$tmp/root/usr/bin/prometheus" "$tmp/root/usr/bin/promtool" "$prom_dir/"
  rm -rf "$tmp"
  step "prometheus ($prom_version): done"
fi
ln -sf "$prom_dir/prometheus" "$bin/prometheus"
ln -sf "$prom_dir/promtool" "$bin/promtool"

go_tool alertmanager "$ALERTMANAGER_VERSION" github.com/prometheus/alertmanager/cmd/alertmanager \
  "-X github.com/prometheus/common/version.Version=${ALERTMANAGER_VERSION#v}" "~2 min"

lua_dir="$tools/$(basename "$LUA_DEB" .deb)"
if [ -x "$lua_dir/lua5.1" ]; then
  step "lua5.1 ($(basename "$LUA_DEB" .deb)): cached"
else
  step "lua5.1: fetching Debian's packages"
  tmp=$(mktemp -d)
  unpack_debs "$tmp/root" LUA LIBLUA
  mkdir -p "$lua_dir/lib"
  cp "$tmp/root/usr/bin/lua5.1" "$lua_dir/lua5.1.bin"
  cp -P "$tmp/root/usr/lib/x86_64-linux-gnu/"liblua5.1.so.0* "$lua_dir/lib/"
  # The interpreter finds its shared library beside it, not in the system's library path.
  printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")\nLD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/lua5.1.bin" "$@"\n' > "$lua_dir/lua5.1"
  chmod +x "$lua_dir/lua5.1"
  rm -rf "$tmp"
  step "lua5.1: done"
fi
ln -sf "$lua_dir/lua5.1" "$bin/lua5.1"

zsh_dir="$tools/$(basename "$ZSH_DEB" .deb)"
if [ -x "$zsh_dir/zsh" ]; then
  step "zsh ($(basename "$ZSH_DEB" .deb)): cached"
else
  step "zsh: fetching Debian's package"
  tmp=$(mktemp -d)
  unpack_debs "$tmp/root" ZSH
  mkdir -p "$zsh_dir"
  cp "$tmp/root/bin/zsh" "$zsh_dir/zsh"
  # zsh takes its module path from what it was built with, never from the environment: a script that
  # needs a module sets module_path=("<this dir>/modules") first.
  cp -r "$tmp/root/usr/lib/x86_64-linux-gnu/zsh/5.9" "$zsh_dir/modules"
  rm -rf "$tmp"
  step "zsh: done"
fi
ln -sf "$zsh_dir/zsh" "$bin/zsh"

# The real node (npm run cluster:up -- --real-node, and the e2e suite test/e2e/realNode.test.ts): kubelet,
# containerd, runc, the CNI plugins and two local images, in one directory keyed by their pins.
node_key=$(cat <(sed -n '/^# The real node/,$p' "$here/versions.env") <(grep '^K8S_VERSION=' "$here/versions.env") \
  "$here/node/go.mod" "$here/node/go.sum" "$here/ociImage.sh" | sha256sum | cut -c1-16)
node_dir="$tools/real-node-$node_key"
if [ -x "$node_dir/bin/kubelet" ] && [ -f "$node_dir/images/busybox.tar" ]; then
  step "real node (kubelet $K8S_VERSION, containerd, runc, CNI plugins, images): cached"
else
  step "real node: building kubelet $K8S_VERSION and unpacking Debian's containerd, runc, CNI plugins, busybox-static"
  tmp=$(mktemp -d)
  mkdir -p "$tmp/bin" "$tmp/cni" "$tmp/images"
  (cd "$here/node" && with_heartbeat kubelet go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/kubelet" k8s.io/kubernetes/cmd/kubelet)
  unpack_debs "$tmp/root" CONTAINERD RUNC CNI_PLUGINS BUSYBOX
  cp "$tmp/root/usr/bin/containerd" "$tmp/root/usr/bin/containerd-shim-runc-v2" "$tmp/root/usr/bin/ctr" "$tmp/root/usr/sbin/runc" "$tmp/bin/"
  cp "$tmp/root/usr/lib/cni/bridge" "$tmp/root/usr/lib/cni/host-local" "$tmp/root/usr/lib/cni/loopback" "$tmp/cni/"
  # One busybox root file system for both images: busybox for the workloads, and the pod sandbox's
  # "pause" (a shell that waits for TERM), so no image comes from a registry.
  rootfs="$tmp/rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev"
  cp "$tmp/root/bin/busybox" "$rootfs/bin/busybox"
  for applet in $("$rootfs/bin/busybox" --list); do [ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"; done
  echo 'root:x:0:0:root:/:/bin/sh' > "$rootfs/etc/passwd"
  bash "$here/ociImage.sh" "$tmp/images/busybox.tar" rollout-guard.local/busybox:1 "$rootfs" '["/bin/sh"]'
  bash "$here/ociImage.sh" "$tmp/images/pause.tar" rollout-guard.local/pause:1 "$rootfs" \
    '["/bin/sh","-c","trap \"exit 0\" TERM INT; while :; do sleep 3600 & wait $!; done"]'
  rm -rf "$node_dir"
  mkdir -p "$node_dir"
  mv "$tmp/bin" "$tmp/cni" "$tmp/images" "$node_dir/"
  rm -rf "$tmp"
  step "real node: done"
fi
ln -sfn "$node_dir" "$bin/real-node"

# The browser of the dashboard's end-to-end tests: Debian's Chromium, from the distribution (not cached
# here: apt installs it system-wide, once).
bash "$here/../scripts/browser.sh"

step "binaries ready in $bin"
echo "$bin"
