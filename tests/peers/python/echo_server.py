"""An upstream on the Python MCP SDK's own HTTP stack -- Starlette served by
uvicorn with its h11 protocol, which is what `pip install mcp` gives a
Streamable HTTP server -- for the tap's request-smuggling tests
(tests/tap_attack.rs).

    .venv/bin/python echo_server.py [PORT]   127.0.0.1:PORT (0 = any free port);
                                              prints "listening on
                                              http://127.0.0.1:PORT" to stderr.

Every request but `GET /seen` is answered with JSON echoing its method, path
and Authorization header (as an MCP server that echoes a caller's token
would), and is recorded; `GET /seen` answers every request recorded so far,
in order, so a test can tell what the server itself parsed off the wire --
a smuggled request included.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SEEN: list[dict[str, str | None]] = []


async def echo(request: Request) -> JSONResponse:
    body = await request.body()
    record = {
        "method": request.method,
        "path": request.url.path,
        "query": request.url.query,
        "authorization": request.headers.get("authorization"),
        "body": body.decode("utf-8", "replace"),
    }
    SEEN.append(record)
    return JSONResponse(record)


async def seen(request: Request) -> JSONResponse:
    return JSONResponse(SEEN)


app = Starlette(
    routes=[
        Route("/seen", seen, methods=["GET"]),
        Route("/{path:path}", echo, methods=["GET", "POST", "PUT", "DELETE"]),
    ]
)


def main(argv: list[str]) -> int:
    raw_port = argv[0] if argv else "0"
    if not raw_port.isdigit() or int(raw_port) > 65535:
        print(f"invalid port: {raw_port}", file=sys.stderr)
        return 2
    # Bound before announcing, so the port is known and early connections
    # wait in the backlog.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(raw_port)))
    sock.listen(128)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    # h11 explicitly: the parser the SDK's install runs (httptools is not
    # one of its dependencies), and the one that ends trailers at LF LF.
    config = uvicorn.Config(app, log_level="warning", http="h11", timeout_keep_alive=30)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
