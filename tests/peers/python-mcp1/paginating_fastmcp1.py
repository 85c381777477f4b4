"""A plain Python `mcp` 1.x `FastMCP` server, run with transport="streamable-http"
(stateful: the SDK's own StreamableHTTPSessionManager), that paginates all four
list kinds. mcp-exporter's tests use it as the legacy-era HTTP server most
deployments run, and as a paginating origin behind gateways.

    .venv/bin/python paginating_fastmcp1.py [PORT]    Streamable HTTP on 127.0.0.1:PORT/mcp
                                                      (0 = any free port; uvicorn then logs
                                                      "Uvicorn running on http://127.0.0.1:PORT")

FastMCP 1.x answers each list with one page, so the four list handlers of its
low-level server are replaced by paging ones; everything else (session manager,
transport security, capabilities) is FastMCP's.

Catalogue (the same as the other paginating peers, so the tests share one table):
  tools              tool_00 .. tool_22                       23 items, 5 per page
  prompts            prompt_0 .. prompt_6                      7 items, 3 per page
  resources          test://paginating/resource/00 .. /11     12 items, 5 per page
  resource templates test://paginating/template/0/{id} .. /3/  4 items, 3 per page
Cursors are opaque (base64url of "<kind>:<offset>"); anything else is -32602.
"""

from __future__ import annotations

import base64
import binascii
import re
import sys
from typing import Any

import mcp.types as types
from mcp.server.fastmcp import FastMCP
from mcp.shared.exceptions import McpError

PAGE_SIZE = {"tools": 5, "prompts": 3, "resources": 5, "resourceTemplates": 3}

CATALOGUE: dict[str, list[Any]] = {
    "tools": [
        types.Tool(name=f"tool_{i:02d}", description=f"Paginated test tool {i}", inputSchema={"type": "object"})
        for i in range(23)
    ],
    "prompts": [types.Prompt(name=f"prompt_{i}", description=f"Paginated test prompt {i}") for i in range(7)],
    "resources": [
        types.Resource(uri=f"test://paginating/resource/{i:02d}", name=f"resource_{i:02d}", mimeType="text/plain")
        for i in range(12)
    ],
    "resourceTemplates": [
        types.ResourceTemplate(uriTemplate=f"test://paginating/template/{i}/{{id}}", name=f"template_{i}")
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
        raise McpError(types.ErrorData(code=types.INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}"))
    return offset


def page(kind: str, request: Any) -> tuple[list[Any], str | None]:
    cursor = request.params.cursor if request.params is not None else None
    offset = 0 if cursor is None else decode_cursor(kind, cursor)
    end = offset + PAGE_SIZE[kind]
    next_cursor = encode_cursor(kind, end) if end < len(CATALOGUE[kind]) else None
    return CATALOGUE[kind][offset:end], next_cursor


async def list_tools(request: types.ListToolsRequest) -> types.ServerResult:
    items, next_cursor = page("tools", request)
    return types.ServerResult(types.ListToolsResult(tools=items, nextCursor=next_cursor))


async def list_prompts(request: types.ListPromptsRequest) -> types.ServerResult:
    items, next_cursor = page("prompts", request)
    return types.ServerResult(types.ListPromptsResult(prompts=items, nextCursor=next_cursor))


async def list_resources(request: types.ListResourcesRequest) -> types.ServerResult:
    items, next_cursor = page("resources", request)
    return types.ServerResult(types.ListResourcesResult(resources=items, nextCursor=next_cursor))


async def list_resource_templates(request: types.ListResourceTemplatesRequest) -> types.ServerResult:
    items, next_cursor = page("resourceTemplates", request)
    return types.ServerResult(types.ListResourceTemplatesResult(resourceTemplates=items, nextCursor=next_cursor))


def main(argv: list[str]) -> int:
    raw_port = argv[0] if argv else "0"
    if not raw_port.isdigit() or int(raw_port) > 65535:
        print(f"usage: paginating_fastmcp1.py [PORT]  (invalid port: {raw_port})", file=sys.stderr)
        return 2
    server = FastMCP("paginating-fastmcp1", host="127.0.0.1", port=int(raw_port))
    # Replace FastMCP's one-page list handlers with paging ones (same request types,
    # so the advertised capabilities stay FastMCP's own).
    handlers = server._mcp_server.request_handlers
    handlers[types.ListToolsRequest] = list_tools
    handlers[types.ListPromptsRequest] = list_prompts
    handlers[types.ListResourcesRequest] = list_resources
    handlers[types.ListResourceTemplatesRequest] = list_resource_templates
    server.run(transport="streamable-http")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
