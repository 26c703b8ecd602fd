#!/usr/bin/env bash
# Builds kube-state-metrics from Go modules (the version go.mod beside this file pins) into the same
# cache as the local control plane, for `npm run bench -- --alert-race`. Not part of CI: only that
# bench mode needs it. Prints the binary's path on the last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^\tk8s.io\/kube-state-metrics\/v2 \(v[^ ]*\).*/\1/p' "$here/go.mod" | head -1)
[ -n "$version" ] || { echo "no kube-state-metrics version in $here/go.mod" >&2; exit 1; }
cache_root=${ROLLOUT_GUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollout-guard}
dir="$cache_root/tools/kube-state-metrics-$version"
if [ ! -x "$dir/kube-state-metrics" ]; then
  echo "kube-state-metrics $version: building (cold: ~5 min on 2 cores)" >&2
  mkdir -p "$dir"
  (cd "$here" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$dir" go install -trimpath -ldflags "-s -w" tool)
fi
echo "$dir/kube-state-metrics"
