"""A Python `mcp` SDK (low-level `Server`) MCP server that paginates all four
list kinds, for mcp-exporter's interop tests.

    .venv/bin/python paginating_server.py                stdio
    .venv/bin/python paginating_server.py http [PORT]    Streamable HTTP on 127.0.0.1:PORT/mcp
                                                         (PORT from argv, else $PORT, else 0 =
                                                         any free port); prints "listening on
                                                         http://127.0.0.1:PORT" to stderr.

Catalogue (identical to the TypeScript and rmcp peers so the tests share one table):
  tools              tool_00 .. tool_22                       23 items, 5 per page
  prompts            prompt_0 .. prompt_6                      7 items, 3 per page
  resources          test://paginating/resource/00 .. /11     12 items, 5 per page
  resource templates test://paginating/template/0/{id} .. /3/  4 items, 3 per page
Cursors are opaque (base64url of "<kind>:<offset>"); anything else is -32602.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

INVALID_PARAMS = -32602

PAGE_SIZE = {"tools": 5, "prompts": 3, "resources": 5, "resourceTemplates": 3}

CATALOGUE: dict[str, list[Any]] = {
    "tools": [
        types.Tool(name=f"tool_{i:02d}", description=f"Paginated test tool {i}", input_schema={"type": "object"})
        for i in range(23)
    ],
    "prompts": [types.Prompt(name=f"prompt_{i}", description=f"Paginated test prompt {i}") for i in range(7)],
    "resources": [
        types.Resource(uri=f"test://paginating/resource/{i:02d}", name=f"resource_{i:02d}", mime_type="text/plain")
        for i in range(12)
    ],
    "resourceTemplates": [
        types.ResourceTemplate(uri_template=f"test://paginating/template/{i}/{{id}}", name=f"template_{i}")
        for i in range(4)
    ],
}


def encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str) -> int:
    """The offset a cursor points at; -32602 for anything this server did not hand out for this kind."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    match = re.fullmatch(r"([A-Za-z]+):(\d+)", text)
    offset = int(match.group(2)) if match else -1
    if not match or match.group(1) != kind or not 0 < offset < len(CATALOGUE[kind]) or offset % PAGE_SIZE[kind]:
        raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}")
    return offset


def page(kind: str, params: types.PaginatedRequestParams | None) -> tuple[list[Any], str | None]:
    cursor = params.cursor if params is not None else None
    offset = 0 if cursor is None else decode_cursor(kind, cursor)
    end = offset + PAGE_SIZE[kind]
    next_cursor = encode_cursor(kind, end) if end < len(CATALOGUE[kind]) else None
    return CATALOGUE[kind][offset:end], next_cursor


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    items, next_cursor = page("tools", params)
    return types.ListToolsResult(tools=items, next_cursor=next_cursor)


async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
    items, next_cursor = page("prompts", params)
    return types.ListPromptsResult(prompts=items, next_cursor=next_cursor)


async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    items, next_cursor = page("resources", params)
    return types.ListResourcesResult(resources=items, next_cursor=next_cursor)


async def list_resource_templates(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    items, next_cursor = page("resourceTemplates", params)
    return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=next_cursor)


def build_server() -> Server[Any]:
    return Server(
        "paginating-python",
        version="1.0.0",
        on_list_tools=list_tools,
        on_list_prompts=list_prompts,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
    )


async def serve_stdio() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(port: int) -> None:
    app = build_server().streamable_http_app(host="127.0.0.1")
    # Bind and listen before announcing, so the port is known (port 0 = any
    # free port) and connections made right after the announcement queue in
    # the backlog until uvicorn accepts them instead of being refused.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "stdio"
    if mode == "stdio":
        anyio.run(serve_stdio)
        return 0
    if mode == "http":
        raw_port = argv[1] if len(argv) > 1 else os.environ.get("PORT", "0")
        if not raw_port.isdigit() or int(raw_port) > 65535:
            print(f"invalid port: {raw_port}", file=sys.stderr)
            return 2
        serve_http(int(raw_port))
        return 0
    print("usage: paginating_server.py [stdio | http [PORT]]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
