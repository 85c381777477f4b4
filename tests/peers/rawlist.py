#!/usr/bin/env python3
"""List an MCP server by hand with raw JSON-RPC, independently of mcp-exporter.

Used to check the interop peers by hand (docs/interop.md records the results):

    python3 rawlist.py [--protocol V] [--garbage-cursor] --stdio -- CMD ARGS...
    python3 rawlist.py [--protocol V] [--garbage-cursor] --url http://127.0.0.1:PORT/mcp
    python3 rawlist.py [--protocol V] [--garbage-cursor] --sse http://127.0.0.1:PORT/sse

Prints the initialize answer, then for each kind every page (item count,
identity keys, whether nextCursor is present) and finally, with
--garbage-cursor, what the server answers to a cursor it never handed out.
Standard library only, so it runs before any peer dependency is installed.
"""

import argparse
import json
import queue
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

KINDS = [
    ("tools", "tools/list", "tools", "name"),
    ("prompts", "prompts/list", "prompts", "name"),
    ("resources", "resources/list", "resources", "uri"),
    ("resource_templates", "resources/templates/list", "resourceTemplates", "uriTemplate"),
]


class StdioPeer:
    def __init__(self, argv):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )

    def request(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        if "id" not in message:
            return None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            answer = json.loads(line)
            # Skip server notifications/requests; only our answer matters.
            if answer.get("id") == message["id"] and "method" not in answer:
                return answer

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class HttpPeer:
    def __init__(self, url, protocol):
        self.url = url
        self.protocol = protocol
        self.session_id = None
        self.sent_initialize = False

    def request(self, message):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.sent_initialize:
            headers["MCP-Protocol-Version"] = self.protocol
        req = urllib.request.Request(self.url, data=json.dumps(message).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                self.session_id = resp.headers.get("Mcp-Session-Id") or self.session_id
                content_type = resp.headers.get("Content-Type", "")
                body = resp.read().decode()
                status = resp.status
        except urllib.error.HTTPError as e:
            return {"http_status": e.code, "body": e.read().decode()}
        if "id" not in message:
            return {"http_status": status}
        if content_type.startswith("text/event-stream"):
            answer = self._answer_from_sse(body, message["id"])
        else:
            answer = json.loads(body)
        if message.get("method") == "initialize":
            # Later requests carry the negotiated version, not the offered one.
            self.sent_initialize = True
            self.protocol = answer.get("result", {}).get("protocolVersion", self.protocol)
        return answer

    @staticmethod
    def _answer_from_sse(body, request_id):
        # Events are separated by a blank line; a priming event has empty data.
        for event in body.split("\n\n"):
            data = "\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith("data:"))
            if not data:
                continue
            answer = json.loads(data)
            if answer.get("id") == request_id and "method" not in answer:
                return answer
        raise RuntimeError(f"no answer to request {request_id} in SSE body: {body!r}")

    def close(self):
        if self.session_id:
            req = urllib.request.Request(
                self.url, headers={"Mcp-Session-Id": self.session_id}, method="DELETE"
            )
            try:
                urllib.request.urlopen(req, timeout=5).close()
            except urllib.error.HTTPError:
                pass


class LegacySsePeer:
    """The 2024-11-05 HTTP+SSE transport: answers arrive on the GET stream."""

    def __init__(self, url):
        self.stream = urllib.request.urlopen(
            urllib.request.Request(url, headers={"Accept": "text/event-stream"}), timeout=10
        )
        self.events = queue.Queue()
        threading.Thread(target=self._read_events, daemon=True).start()
        kind, data = self.events.get(timeout=10)
        if kind != "endpoint":
            raise RuntimeError(f"expected an endpoint event first, got {kind}: {data}")
        self.post_url = urllib.parse.urljoin(url, data)

    def _read_events(self):
        try:
            self._read_events_until_closed()
        except (OSError, ValueError):
            pass  # the stream was closed or timed out; the main thread reports missing answers

    def _read_events_until_closed(self):
        kind, data = "message", []
        for raw in self.stream:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line:
                if data:
                    self.events.put((kind, "\n".join(data)))
                kind, data = "message", []

    def request(self, message):
        req = urllib.request.Request(
            self.post_url, data=json.dumps(message).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            status = resp.status
        if "id" not in message:
            return {"http_status": status}
        while True:
            kind, data = self.events.get(timeout=10)
            answer = json.loads(data)
            if kind == "message" and answer.get("id") == message["id"] and "method" not in answer:
                return answer

    def close(self):
        self.stream.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="2025-11-25")
    parser.add_argument("--garbage-cursor", action="store_true")
    parser.add_argument("--url")
    parser.add_argument("--sse", help="legacy HTTP+SSE endpoint, e.g. http://127.0.0.1:PORT/sse")
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if args.stdio:
        peer = StdioPeer(args.command)
    elif args.sse:
        peer = LegacySsePeer(args.sse)
    else:
        peer = HttpPeer(args.url, args.protocol)
    next_id = iter(range(1, 10_000))
    try:
        init = peer.request(
            {
                "jsonrpc": "2.0",
                "id": next(next_id),
                "method": "initialize",
                "params": {
                    "protocolVersion": args.protocol,
                    "capabilities": {},
                    "clientInfo": {"name": "rawlist", "version": "0"},
                },
            }
        )
        result = init.get("result", init)
        print(f"offered {args.protocol} -> answered {result.get('protocolVersion')}")
        print(f"serverInfo {json.dumps(result.get('serverInfo'))}")
        print(f"capabilities {json.dumps(result.get('capabilities'))}")
        notified = peer.request({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if notified:
            print(f"notifications/initialized -> HTTP {notified['http_status']}")
        for kind, method, field, key in KINDS:
            cursor = None
            pages = []
            while True:
                params = {} if cursor is None else {"cursor": cursor}
                answer = peer.request({"jsonrpc": "2.0", "id": next(next_id), "method": method, "params": params})
                if "result" not in answer:
                    print(f"{kind}: page {len(pages)} -> {json.dumps(answer)}")
                    break
                items = answer["result"].get(field, [])
                state = "absent" if "nextCursor" not in answer["result"] else repr(answer["result"]["nextCursor"])
                pages.append(len(items))
                print(f"{kind}: page {len(pages) - 1}: {len(items)} items, nextCursor {state}: "
                      f"{[item.get(key) for item in items]}")
                cursor = answer["result"].get("nextCursor")
                if not cursor or len(pages) > 100:
                    break
            print(f"{kind}: pages {pages} total {sum(pages)}")
            if args.garbage_cursor:
                answer = peer.request(
                    {"jsonrpc": "2.0", "id": next(next_id), "method": method, "params": {"cursor": "not-a-cursor"}}
                )
                print(f"{kind}: garbage cursor -> {json.dumps(answer.get('error', answer.get('result')))[:200]}")
    finally:
        peer.close()


if __name__ == "__main__":
    sys.exit(main())
