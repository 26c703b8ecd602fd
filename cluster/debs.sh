#!/usr/bin/env bash
# Sourced, after versions.env, by cluster/build.sh (the tests' tools and the real node) and
# scripts/image.sh (the operator image's shared libraries): one way to fetch a pinned Debian package.
#
# unpack_debs ROOT NAME...: downloads each Debian package NAME_DEB of versions.env, checks it against
# NAME_DEB_SHA256, and unpacks them all into ROOT.
unpack_debs() {
  local root=$1 work deb file_var sum_var
  shift
  work=$(mktemp -d)
  for deb in "$@"; do
    file_var=${deb}_DEB sum_var=${deb}_DEB_SHA256
    curl -sSfL --retry 3 -o "$work/$deb.deb" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}/${!file_var}"
    echo "${!sum_var}  $work/$deb.deb" | sha256sum -c --quiet -
    dpkg-deb -x "$work/$deb.deb" "$root"
  done
  rm -rf "$work"
}
