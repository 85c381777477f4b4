#!/usr/bin/env python3
"""The sessions and GET streams of scripts/load-tap (standard library only).

  load_tap_sessions.py init ORIGIN PATHS N CLIENTS OUT
      N sessions (initialize, then notifications/initialized) spread over the
      paths in the file PATHS (one a line), clientInfo names app-01 … app-CLIENTS,
      through ORIGIN (http://host:port); writes "session-id path" lines to OUT.
  load_tap_sessions.py streams ORIGIN SESSIONS COUNT SECONDS
      holds COUNT standing GET streams (the first COUNT sessions of SESSIONS)
      open for SECONDS, then closes them; prints how many opened.

Loopback only: ORIGIN must be 127.0.0.1 or localhost. Bounded in count and time.
"""

import asyncio
import json
import sys
from urllib.parse import urlsplit

CONNECTIONS = 32
PROTOCOL = "2025-11-25"


def origin(url):
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit(f"load_tap_sessions: {url}: loopback only")
    return parts.hostname, parts.port or 80


async def read_answer(reader):
    """Status, headers (lower-cased) and body of one HTTP/1.1 answer."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = b""
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
    return status, headers, body


def post(host, path, body, session=None):
    data = json.dumps(body).encode()
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Mcp-Protocol-Version: {PROTOCOL}",
        f"Content-Length: {len(data)}",
    ]
    if session:
        lines.append(f"Mcp-Session-Id: {session}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


async def make_sessions(url, paths, count, clients, out):
    host, port = origin(url)
    made = []
    todo = list(range(count))

    async def worker():
        reader, writer = await asyncio.open_connection(host, port)
        while todo:
            i = todo.pop()
            path = paths[i % len(paths)]
            name = f"app-{i % clients + 1:02d}"
            writer.write(post(host, path, {
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                           "clientInfo": {"name": name, "version": "1.0"}}}))
            status, headers, _ = await read_answer(reader)
            session = headers.get("mcp-session-id")
            if status != 200 or not session:
                sys.exit(f"load_tap_sessions: initialize on {path} answered {status}")
            writer.write(post(host, path, {"jsonrpc": "2.0",
                                           "method": "notifications/initialized"}, session))
            await read_answer(reader)
            made.append((session, path))
        writer.close()

    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    with open(out, "w") as f:
        for session, path in made:
            f.write(f"{session} {path}\n")
    print(f"sessions={len(made)}")


async def hold_streams(url, sessions_file, count, seconds):
    host, port = origin(url)
    with open(sessions_file) as f:
        sessions = [line.split() for line in f][:count]

    async def open_stream(session, path):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
                      "Accept: text/event-stream\r\n"
                      f"Mcp-Protocol-Version: {PROTOCOL}\r\n"
                      f"Mcp-Session-Id: {session}\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        return reader, writer, b" 200 " in head.split(b"\r\n")[0]

    async def hold(reader, writer):
        try:
            await asyncio.wait_for(reader.read(-1), seconds)
        except asyncio.TimeoutError:
            pass
        writer.close()

    opened = await asyncio.gather(*(open_stream(s, p) for s, p in sessions))
    print(f"streams_opened={sum(1 for _, _, ok in opened if ok)}", flush=True)
    await asyncio.gather(*(hold(r, w) for r, w, _ in opened))


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "init":
        paths = [p.strip() for p in open(sys.argv[3]) if p.strip()]
        asyncio.run(make_sessions(sys.argv[2], paths, int(sys.argv[4]),
                                  int(sys.argv[5]), sys.argv[6]))
    elif len(sys.argv) == 6 and sys.argv[1] == "streams":
        asyncio.run(hold_streams(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                                 float(sys.argv[5])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
