"""A Streamable HTTP MCP server whose tools/list answer is one SSE data line
of argv[1] bytes, written 16 KiB at a time, never ended (tests/hardening.rs)."""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOTAL = int(sys.argv[1])  # bytes of the huge data line
CHUNK = 16 * 1024

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        msg = json.loads(self.rfile.read(n))
        method = msg.get("method")
        if "id" not in msg:
            self.send_response(202); self.send_header("Content-Length", "0"); self.end_headers(); return
        if method == "initialize":
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "drip", "version": "1"}}}).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body); return
        if method == "tools/list":
            self.send_response(200); self.send_header("Content-Type", "text/event-stream"); self.send_header("Connection", "close"); self.end_headers()
            self.wfile.write(b"data: ")
            chunk = b"x" * CHUNK
            try:
                for _ in range(TOTAL // CHUNK):
                    self.wfile.write(chunk); self.wfile.flush()
                    time.sleep(0.0005)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}).encode()
        self.send_response(400); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)

# One thread per connection: the client may open a second connection while
# the first is idle in its pool, and a one-connection server would never
# read the request on it.
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print("listening on http://127.0.0.1:%d" % srv.server_address[1], file=sys.stderr, flush=True)
srv.serve_forever()
