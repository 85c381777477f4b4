#!/usr/bin/env bash
# How long does a 1,000-page listing take over loopback, and how much of it
# is the client? Compares `mcp-exporter probe` with a bare Python HTTP loop
# (keep-alive, no MCP client, cursor threading only) against the simulator,
# with JSON answers and with SSE answers that prime their stream (the
# delayed-ACK trap). Needs: cargo, python3, hyperfine (Debian package).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
bin="$PWD/target/release/mcp-exporter"
pages="${PAGES:-1000}"
runs="${RUNS:-5}"
tmp="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

cat > "$tmp/bare_loop.py" <<'PY'
# A bare keep-alive HTTP loop: initialize, then tools/list until no cursor.
import http.client, json, sys, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
conn = http.client.HTTPConnection(url.hostname, url.port)
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
def call(i, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    conn.request("POST", url.path, body, headers)
    r = conn.getresponse()
    data = r.read().decode()
    sid = r.getheader("Mcp-Session-Id")
    if sid:
        headers["Mcp-Session-Id"] = sid
    if data.startswith("{"):
        return json.loads(data)
    msgs = [l[5:].strip() for l in data.splitlines() if l.startswith("data:") and l[5:].strip()]
    return json.loads(msgs[-1])
call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bare", "version": "0"}})
cursor, n, i = None, 0, 1
while True:
    i += 1
    res = call(i, "tools/list", {"cursor": cursor} if cursor else {})["result"]
    n += len(res["tools"])
    cursor = res.get("nextCursor")
    if not cursor:
        break
print(n, file=sys.stderr)
PY

start_sim() { # response-mode extra-flags...
  local mode="$1"; shift
  "$bin" simulate --transport http --response "$mode" --scenario healthy \
    --items $((pages * 2)) --page-size 2 "$@" >/dev/null 2>"$tmp/sim.err" &
  for _ in $(seq 50); do grep -q listening "$tmp/sim.err" && break; sleep 0.1; done
  grep -o 'http://[0-9.:]*' "$tmp/sim.err"
}

for mode in json sse; do
  base="$(start_sim "$mode")"
  echo "== $pages pages, $mode answers (server without TCP_NODELAY)"
  hyperfine --warmup 1 --runs "$runs" --style basic \
    -n "mcp-exporter probe" "$bin probe --url $base/mcp --kind tools --max-pages $((pages + 1))" \
    -n "bare python loop" "python3 $tmp/bare_loop.py $base/mcp"
  kill %% 2>/dev/null || true; wait 2>/dev/null || true
done
