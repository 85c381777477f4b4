"""FastMCP (PyPI `fastmcp`) as a gateway in front of MCP origins, for mcp-exporter's
gateway tests (tests/gateway_*.rs). Serves Streamable HTTP at /mcp on 127.0.0.1.

    .venv/bin/python gateway.py proxy URL                  create_proxy(URL)
    .venv/bin/python gateway.py mount NAME=URL [NAME=URL]  a FastMCP server mounting
                                                           create_proxy(URL) under each
                                                           namespace NAME

Binds 127.0.0.1 port 0 (any free port) before announcing it, then prints
"listening on http://127.0.0.1:PORT" to stderr. The origins are whatever the
test starts (the exporter's simulator, over HTTP).
"""

from __future__ import annotations

import socket
import sys

import anyio
from fastmcp import FastMCP
from fastmcp.server import create_proxy


def build(argv: list[str]) -> FastMCP | None:
    if len(argv) == 2 and argv[0] == "proxy":
        return create_proxy(argv[1], name="fastmcp-proxy")
    if len(argv) >= 2 and argv[0] == "mount" and all("=" in a for a in argv[1:]):
        gateway = FastMCP("fastmcp-mount")
        for spec in argv[1:]:
            namespace, url = spec.split("=", 1)
            gateway.mount(create_proxy(url, name=namespace), namespace=namespace)
        return gateway
    return None


def main(argv: list[str]) -> int:
    gateway = build(argv)
    if gateway is None:
        print("usage: gateway.py proxy URL | gateway.py mount NAME=URL [NAME=URL ...]", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    anyio.run(
        lambda: gateway.run_http_async(
            show_banner=False, transport="http", path="/mcp", log_level="warning", sockets=[sock]
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
