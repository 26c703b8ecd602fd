#!/usr/bin/env bash
# ociImage.sh OUT.tar NAME ROOTFS ENTRYPOINT_JSON|CONFIG_JSON
# Writes an OCI image archive (image layout, one uncompressed layer) of ROOTFS named NAME, for
# `ctr images import`: the real node's images and the operator's own (scripts/image.sh) come from this
# machine, not from a registry. The archive is reproducible (sorted entries, mtime 0, root owner, no
# creation time), so its digest is the same on every run.
#
# The fourth argument is either an entrypoint (a JSON array: the test images, which run as root in / with
# PATH=/bin) or a whole image config (a compact JSON object: User, Env, WorkingDir, ExposedPorts,
# Entrypoint, Cmd), written as given. NAME is stored as given too: containerd takes it verbatim, so it
# must be a full reference (registry/repository:tag) for the kubelet to find the image.
set -euo pipefail
out=$1 name=$2 rootfs=$3 entrypoint=$4
case $entrypoint in
  '{'*) image_config=$entrypoint ;;
  *) image_config=$(printf '{"Entrypoint":%s,"Env":["PATH=/bin"],"WorkingDir":"/"}' "$entrypoint") ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"
tarball() { tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner "$@"; }
# Moves a file into blobs/ under its digest and prints the digest.
blob() { local d; d=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$work/blobs/sha256/$d"; echo "$d"; }
size() { stat -c %s "$work/blobs/sha256/$1"; }

tarball -C "$rootfs" -cf "$work/layer.tar" .
layer=$(blob "$work/layer.tar")
printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$image_config" "$layer" > "$work/config.json"
config=$(blob "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
  "$config" "$(size "$config")" "$layer" "$(size "$layer")" > "$work/manifest.json"
manifest=$(blob "$work/manifest.json")
# containerd names the imported image from io.containerd.image.name.
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest" "$(size "$manifest")" "$name" "${name##*:}" > "$work/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$work/oci-layout"
# The layout's own files get fixed modes: they were made here, under whatever umask the caller has.
tarball --mode=u=rwX,go=rX -C "$work" -cf "$out" oci-layout index.json blobs
