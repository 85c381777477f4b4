#!/usr/bin/env bash
# Scale check for the simulator: start one `mcp-exporter simulate` process
# serving many virtual servers (config/scenarios-scale.yaml: 2,000), list
# tools/list to completion on a few hundred of them over Streamable HTTP,
# and print the process's resident memory from /proc.
#
# Usage: scripts/bench-simulator-scale.sh [SERVERS_TO_LIST] [SCENARIOS_FILE]
#        Lists healthy-0001 ... healthy-N: N <= 1900 with the default file.
# Env:   BIN=path/to/mcp-exporter (default: target/release, else target/debug)
#        PARALLEL=8 (concurrent clients)
# Needs only the built binary, curl and /proc.
set -euo pipefail

cd "$(dirname "$0")/.."
LIST=${1:-300}
FILE=${2:-config/scenarios-scale.yaml}
PARALLEL=${PARALLEL:-8}
if [[ -z "${BIN:-}" ]]; then
  if [[ -x target/release/mcp-exporter ]]; then BIN=target/release/mcp-exporter
  else BIN=target/debug/mcp-exporter; fi
fi
[[ -x "$BIN" ]] || { echo "no binary at $BIN (cargo build --release first)" >&2; exit 2; }

tmp=$(mktemp -d)
pid=""
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$BIN" simulate --transport http --listen 127.0.0.1:0 --scenarios "$FILE" 2>"$tmp/stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$tmp/stderr" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/stderr" >&2; exit 1; }
  sleep 0.1
done
base=$(sed -n 's/^listening on //p' "$tmp/stderr" | head -n1)
[[ -n "$base" ]] || { echo "simulator did not report its address" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"; }
servers=$(grep -E '^\s+count:' "$FILE" | awk '{s += $2} END {print s}')
echo "binary:            $BIN"
echo "virtual servers:   ${servers:-?} (from $FILE)"
echo "RSS after start:   $(( $(rss_kib) / 1024 )) MiB"

# One client: initialize, then walk tools/list by nextCursor; prints the
# item count it saw.
walk() {
  local url=$1 hdr body sid cursor params items=0 page
  hdr=$(mktemp "$tmp/h.XXXX")
  curl -sS -o /dev/null -D "$hdr" -X POST "$url" \
    -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}'
  sid=$(awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}' "$hdr" | tr -d '\r')
  rm -f "$hdr"
  curl -sS -o /dev/null -X POST "$url" -H 'content-type: application/json' \
    -H "mcp-session-id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  cursor=""
  for page in $(seq 1 50); do
    if [[ -z "$cursor" ]]; then params='{}'; else params="{\"cursor\":\"$cursor\"}"; fi
    body=$(curl -sS -X POST "$url" -H 'content-type: application/json' \
      -H 'accept: application/json, text/event-stream' -H "mcp-session-id: $sid" \
      -d "{\"jsonrpc\":\"2.0\",\"id\":$((page + 1)),\"method\":\"tools/list\",\"params\":$params}")
    items=$(( items + $(grep -o '"name":"tool-[0-9]*"' <<<"$body" | wc -l) ))
    cursor=$(sed -n 's/.*"nextCursor":"\([^"]*\)".*/\1/p' <<<"$body")
    [[ -n "$cursor" ]] || break
  done
  curl -sS -o /dev/null -X DELETE "$url" -H "mcp-session-id: $sid"
  echo "$items"
}
export -f walk
export tmp

start=$(date +%s.%N)
total=$(seq 1 "$LIST" | awk -v b="$base" '{printf "%s/mcp/healthy-%04d\n", b, $1}' \
  | xargs -P "$PARALLEL" -I{} bash -c 'walk "$1"' _ {} | awk '{s += $1} END {print s}')
end=$(date +%s.%N)
echo "listed:            $LIST servers, $total tools in $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s"
echo "RSS after listing: $(( $(rss_kib) / 1024 )) MiB (peak $(( $(hwm_kib) / 1024 )) MiB)"
