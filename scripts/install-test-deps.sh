#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine (run as root,
# or with sudo available): a real Prometheus, promtool and Alertmanager,
# headless Chromium, and the MCP SDK
# peers used by the interop tests. Idempotent: quick when all is present.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

need_apt=()
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
# Alert delivery end to end (tests/alertmanager_e2e.rs).
command -v prometheus-alertmanager >/dev/null 2>&1 || need_apt+=(prometheus-alertmanager)
# The status page as a browser renders it (tests/status_browser.rs).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${need_apt[*]}"
  as_root apt-get update -qq
  # policy-rc.d keeps the package from starting its own Prometheus service.
  if [ "$(id -u)" -eq 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ -x scripts/install-peers.sh ]; then
  scripts/install-peers.sh
fi
