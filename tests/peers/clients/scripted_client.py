#!/usr/bin/env python3
"""A scripted MCP client for check-client's tests: it lists tools the way
each kind of client does, good or bad, chosen by flags, so that every grade
of every check-client scenario can be shown. Python standard library only.

    scripted_client.py [--url URL | -- CMD ARGS...] [behaviour flags]

The server is --url (Streamable HTTP; JSON or event-stream answers), else
the command after `--`, else MCP_SERVER_URL, else the JSON argv in
MCP_SERVER_COMMAND (stdio). Prints the number of tools it ends with on
stdout (unless --print none); errors go to stderr with exit status 1.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--url")
    p.add_argument("--pages", choices=["first", "all"], default="all")
    p.add_argument("--cap", type=int, default=1000, help="most pages of one listing")
    p.add_argument("--at-cap", choices=["error", "quiet"], default="error")
    p.add_argument("--on-repeat", choices=["error", "quiet", "ignore"], default="error",
                   help="a cursor already sent in this listing comes back")
    p.add_argument("--on-invalid", choices=["restart", "retry", "error", "quiet"], default="error",
                   help="-32602 on a continuation")
    p.add_argument("--blank", choices=["end", "cursor"],
                   help="nextCursor \"\" (default: the end before 2026-07-28, a cursor with --modern)")
    p.add_argument("--null", choices=["end", "cursor", "error"], default="end", help="nextCursor null")
    p.add_argument("--on-change", choices=["restart", "relist", "ignore"], default="ignore",
                   help="notifications/tools/list_changed during the walk")
    p.add_argument("--dedupe", action="store_true", help="count each tool name once")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    p.add_argument("--on-timeout", choices=["error", "quiet"], default="error")
    p.add_argument("--modern", action="store_true", help="speak 2026-07-28 (no initialize)")
    p.add_argument("--sessions", type=int, default=1, help="sessions opened before listing")
    p.add_argument("--print", dest="print_", choices=["count", "none"], default="count")
    p.add_argument("--no-connect", action="store_true", help="ignore the server, exit 0")
    p.add_argument("--crash", action="store_true", help="exit 1 at once")
    p.add_argument("--hang", action="store_true", help="never exit after listing")
    p.add_argument("--past-end", action="store_true",
                   help="after the last page, send a cursor of its own making")
    p.add_argument("--garbage", action="store_true", help="send a line that is not JSON first")
    p.add_argument("--exit-code", type=int, default=0, help="exit status after listing")
    p.add_argument("command", nargs="*")
    return p.parse_args()


def die(message):
    print(f"scripted_client: {message}", file=sys.stderr)
    sys.exit(1)


class Http:
    def __init__(self, url, timeout, modern):
        self.url, self.timeout, self.modern, self.session = url, timeout, modern, None

    def send(self, message):
        """POST one message; every message of the answer (notifications first)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.modern:
            headers["Mcp-Method"] = message["method"]
            headers["MCP-Protocol-Version"] = MODERN
        request = urllib.request.Request(self.url, json.dumps(message).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                self.session = answer.headers.get("Mcp-Session-Id", self.session)
                body = answer.read().decode()
                kind = answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            body, kind = e.read().decode(), e.headers.get("Content-Type", "")
        if not body.strip():
            return []
        if kind.startswith("text/event-stream"):
            return [json.loads(d) for d in sse_data(body)]
        return [json.loads(body)]

    def send_raw(self, body):
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"}, method="POST")
        try:
            urllib.request.urlopen(request, timeout=self.timeout).close()
        except (urllib.error.URLError, OSError):
            pass

    def close(self):
        if self.session and not self.modern:
            request = urllib.request.Request(self.url, headers={"Mcp-Session-Id": self.session}, method="DELETE")
            try:
                urllib.request.urlopen(request, timeout=self.timeout).close()
            except (urllib.error.URLError, OSError):
                pass


def sse_data(body):
    for event in body.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:")]
        if data and "".join(data).strip():
            yield "\n".join(data)


class Stdio:
    def __init__(self, argv, timeout):
        self.timeout = timeout
        self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, message):
        self.child.stdin.write((json.dumps(message) + "\n").encode())
        self.child.stdin.flush()
        if "id" not in message:
            return []
        out = []
        deadline = time.monotonic() + self.timeout
        while True:
            if time.monotonic() > deadline:
                raise socket.timeout("no answer")
            line = self.child.stdout.readline()
            if not line:
                die("the server closed stdout")
            got = json.loads(line)
            out.append(got)
            if got.get("id") == message["id"] and "method" not in got:
                return out

    def send_raw(self, line):
        self.child.stdin.write(line)
        self.child.stdin.flush()

    def close(self):
        self.child.stdin.close()
        try:
            self.child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.child.kill()


class Client:
    def __init__(self, link, modern):
        self.link, self.modern, self.next_id = link, modern, 0

    def request(self, method, params):
        """(result, error code, list_changed seen) of one request."""
        self.next_id += 1
        params = dict(params)
        if self.modern:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientCapabilities": {}}
        messages = self.link.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        changed = any(m.get("method") == "notifications/tools/list_changed" for m in messages)
        answer = next((m for m in messages if m.get("id") == self.next_id and "method" not in m), None)
        if answer is None:
            die(f"no answer to {method}")
        if "error" in answer:
            return None, answer["error"].get("code"), changed
        return answer.get("result", {}), None, changed

    def initialize(self):
        if self.modern:
            return
        result, code, _ = self.request("initialize", {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "scripted-client", "version": "1.0.0"}})
        if code is not None:
            die(f"initialize failed ({code})")
        self.link.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


MISSING = object()


def walk(client, args):
    """The tools one listing ends with, and whether a list_changed came."""
    cursor, sent, items, pages = MISSING, set(), [], 0
    restarted, retried, changed = False, False, False
    while True:
        params = {} if cursor is MISSING else {"cursor": cursor}
        try:
            result, code, note = client.request("tools/list", params)
        except (socket.timeout, TimeoutError, urllib.error.URLError) as e:
            if args.on_timeout == "error":
                die(f"tools/list timed out: {e}")
            return items, changed
        pages += 1
        changed |= note
        if note and args.on_change == "restart" and not restarted:
            restarted, cursor, sent, items, pages = True, MISSING, set(), [], 0
            continue
        if code is not None:
            if code == -32602 and cursor is not MISSING:
                if args.on_invalid == "restart" and not restarted:
                    restarted, cursor, sent, items, pages = True, MISSING, set(), [], 0
                    continue
                if args.on_invalid == "retry" and not retried:
                    retried = True
                    continue
                if args.on_invalid == "quiet":
                    return items, changed
            die(f"tools/list failed with error {code}")
        items += [t.get("name") for t in result.get("tools", [])]
        if args.pages == "first":
            return items, changed
        nxt = result.get("nextCursor", MISSING)
        if nxt is MISSING:
            if args.past_end:
                client.request("tools/list", {"cursor": "page-after-the-last"})
            return items, changed
        if nxt is None:
            if args.null == "error":
                die("nextCursor is null, not a string")
            if args.null == "end":
                return items, changed
        blank_ends = args.blank == "end" or (args.blank is None and not args.modern)
        if nxt == "" and blank_ends:
            return items, changed
        if nxt in sent and args.on_repeat != "ignore":
            if args.on_repeat == "error":
                die(f"cursor repeated after {pages} pages: the listing does not end")
            return items, changed
        if pages >= args.cap:
            if args.at_cap == "error":
                die(f"gave up after {pages} pages (page cap)")
            return items, changed
        sent.add(nxt)
        cursor = nxt


def link_of(args):
    url = args.url or (None if args.command else os.environ.get("MCP_SERVER_URL"))
    if url:
        return Http(url, args.timeout, args.modern)
    argv = args.command or json.loads(os.environ.get("MCP_SERVER_COMMAND", "[]"))
    if not argv:
        die("no server: --url, -- CMD, MCP_SERVER_URL or MCP_SERVER_COMMAND")
    return Stdio(argv, args.timeout)


def main():
    args = parse_args()
    if args.crash:
        die("crashed on purpose")
    if args.no_connect:
        return
    link = link_of(args)
    client = Client(link, args.modern)
    if args.garbage:
        link.send_raw(b"this is not JSON\n")
    for _ in range(args.sessions):
        if isinstance(link, Http):
            link.session = None
        client.initialize()
    items, changed = walk(client, args)
    if changed and args.on_change == "relist":
        items, _ = walk(client, args)
    link.close()
    if args.print_ == "count":
        print(len(set(items)) if args.dedupe else len(items), flush=True)
    while args.hang:
        time.sleep(60)
    sys.exit(args.exit_code)


if __name__ == "__main__":
    main()
