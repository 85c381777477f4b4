#!/usr/bin/env bash
# Installs the real MCP SDK servers, clients and gateways that tests/interop.rs,
# tests/gateway_*.rs and the tap's tests (tests/client_peers.rs and the tap end-to-end tests)
# run, pinned, into folders under tests/peers (all git-ignored):
#
#   tests/peers/node_modules       npm ci from the committed package-lock.json:
#                                  @modelcontextprotocol/server-everything, the
#                                  TypeScript SDK 1.x and the 2.x client, the
#                                  conformance suite, and the gateways
#                                  supergateway and mcp-proxy
#   tests/peers/python/.venv       the Python `mcp` 2.x SDK (server and client),
#                                  full closure pinned in
#                                  tests/peers/python/requirements.txt
#   tests/peers/python-mcp1/.venv    Python `mcp` 1.x and the PyPI mcp-proxy gateway,
#                                  tests/peers/python-mcp1/requirements.txt
#   tests/peers/fastmcp/.venv      PyPI fastmcp (proxy and mount gateways, client),
#                                  tests/peers/fastmcp/requirements.txt
#   tests/peers/fastmcp2/.venv     PyPI fastmcp 2.14 (a client that reads page 1
#                                  only, for check-client's tests),
#                                  tests/peers/fastmcp2/requirements.txt
#   tests/peers/rmcp/target        the rmcp peer, cargo build --locked
#
# Needs Node 20 + npm, Python 3.11 and cargo (Debian 12: run as root and a
# missing python3-venv is installed with apt-get). Idempotent: each part is
# skipped when the stamp of its lockfile matches what is installed.
#
# Usage: scripts/install-peers.sh [--force]      (--force reinstalls everything)

set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="$repo_root/tests/peers"
force=0
[[ "${1:-}" == "--force" ]] && force=1

log() { printf 'install-peers: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# True when the stamp file records the given lockfile's current hash.
up_to_date() {
  local lockfile="$1" stamp="$2"
  [[ $force -eq 0 && -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$(sha256sum "$lockfile" | cut -d' ' -f1)" ]]
}
write_stamp() { sha256sum "$1" | cut -d' ' -f1 >"$2"; }

require() { command -v "$1" >/dev/null 2>&1 || die "$1 not found; $2"; }

install_node_peers() {
  require node "install Node.js 20 (with npm)"
  require npm "install npm"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [[ "$major" -ge 20 ]] || die "Node $major is too old; the peers need Node 20 or newer"
  local stamp="$peers/node_modules/.install-peers-stamp"
  if up_to_date "$peers/package-lock.json" "$stamp"; then
    log "node peers up to date"
    return
  fi
  log "npm ci in tests/peers"
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error)
  write_stamp "$peers/package-lock.json" "$stamp"
}

ensure_python_venv_support() {
  if python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    return
  fi
  # Debian ships venv/ensurepip separately.
  if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing python3-venv with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null; }
  else
    die "python3 cannot create virtual environments; install python3-venv"
  fi
}

# Creates tests/peers/<folder>/.venv from <folder>/requirements.txt (a full
# closure of == pins, installed with --no-deps and then checked by pip check).
install_python_venv() {
  local folder="$1" what="$2"
  local venv="$peers/$folder/.venv"
  local requirements="$peers/$folder/requirements.txt"
  local stamp="$venv/.install-peers-stamp"
  if [[ -x "$venv/bin/python" ]] && up_to_date "$requirements" "$stamp"; then
    log "$what up to date"
    return
  fi
  ensure_python_venv_support
  log "creating tests/peers/$folder/.venv ($what)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-deps -r "$requirements"
  # The closure is pinned with --no-deps; check that it really is complete.
  "$venv/bin/python" -m pip check --disable-pip-version-check >/dev/null \
    || die "tests/peers/$folder/requirements.txt is not a complete closure (pip check failed)"
  write_stamp "$requirements" "$stamp"
}

install_python_peers() {
  require python3 "install Python 3.11"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "the Python mcp SDK needs Python 3.10 or newer"
  install_python_venv python "python peer (mcp 2.x)"
  install_python_venv python-mcp1 "python mcp 1.x peer and PyPI mcp-proxy"
  install_python_venv fastmcp "fastmcp gateways"
  install_python_venv fastmcp2 "fastmcp 2.14 client"
}

install_rmcp_peer() {
  require cargo "install Rust (cargo)"
  local stamp="$peers/rmcp/target/.install-peers-stamp"
  local binary="$peers/rmcp/target/debug/paginating-rmcp"
  if [[ -x "$binary" ]] && up_to_date "$peers/rmcp/Cargo.lock" "$stamp" \
    && [[ "$binary" -nt "$peers/rmcp/src/main.rs" ]]; then
    log "rmcp peer up to date"
    return
  fi
  log "cargo build --locked in tests/peers/rmcp"
  cargo build --quiet --locked \
    --manifest-path "$peers/rmcp/Cargo.toml" --target-dir "$peers/rmcp/target"
  write_stamp "$peers/rmcp/Cargo.lock" "$stamp"
}

install_node_peers
install_python_peers
install_rmcp_peer
log "all peers installed under tests/peers"
