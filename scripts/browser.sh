#!/usr/bin/env bash
# Installs the browser the dashboard's end-to-end test drives: Debian's Chromium (with its driver), from
# the distribution's repositories, only when /usr/bin/chromium is missing. playwright-core drives it
# through that path and never downloads a browser of its own. Needs root (apt-get), as the CI machine runs.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "[browser] chromium: present ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))" >&2
  exit 0
fi
echo "[browser] chromium: installing Debian's package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
echo "[browser] chromium: installed ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))" >&2
