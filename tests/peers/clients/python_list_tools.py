#!/usr/bin/env python3
"""List tools the way an app built on the Python `mcp` SDK does: one
`ClientSession.list_tools()` call (the SDK hands back one page; the caller
must loop, and most apps do not) — or, with `--walk`, the loop an app that
does follow `nextCursor` writes.

    python python_list_tools.py --url URL [--transport http|sse] [--name NAME] [--version V]
        [--source-address ADDR] [--walk]
    python python_list_tools.py --transport stdio [--name NAME] [--version V] -- CMD ARGS...

`--source-address` connects from that local address (`127.0.0.2`: an app on
another host, as a tap's address map sees it), through the SDK's own
`http_client` (httpx2 `AsyncHTTPTransport(local_address=...)`).

Prints one JSON object on stdout: {"client", "count", "names", "next_cursor"}.
`next_cursor` says whether the last page it saw carried one (ignored).
Runs in tests/peers/python/.venv (installed by scripts/install-peers.sh).
"""

import argparse
import json
from contextlib import asynccontextmanager

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp_types import Implementation, PaginatedRequestParams


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--transport", choices=["http", "sse", "stdio"], default="http")
    parser.add_argument("--name", default=None, help="clientInfo.name; the SDK's default (mcp 0.1.0) when absent")
    parser.add_argument("--version", default="0.1.0")
    parser.add_argument("--source-address", default=None, help="connect from this local address")
    parser.add_argument("--walk", action="store_true", help="follow nextCursor to the last page")
    parser.add_argument("command", nargs="*", help="stdio: the server's command and arguments, after --")
    args = parser.parse_args()
    if (args.transport == "stdio") != bool(args.command) or (args.transport != "stdio" and not args.url):
        parser.error("--url for http and sse; -- CMD ARGS... for stdio")
    return args


def http_client(source_address, headers=None, timeout=None, auth=None):
    """The SDK's default client, connecting from `source_address`."""
    transport = httpx2.AsyncHTTPTransport(local_address=source_address)
    timeout = timeout or httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(transport=transport, headers=headers, timeout=timeout, auth=auth)


@asynccontextmanager
async def http_from(url, source):
    """Streamable HTTP over a client of ours (the SDK leaves it to us to close)."""
    async with http_client(source) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            yield streams


def transport_of(args):
    source = args.source_address
    if args.transport == "http":
        if source:
            return http_from(args.url, source)
        return streamable_http_client(args.url)
    if args.transport == "sse":
        if source:
            factory = lambda headers=None, timeout=None, auth=None: http_client(source, headers, timeout, auth)  # noqa: E731
            return sse_client(args.url, httpx_client_factory=factory)
        return sse_client(args.url)
    server = StdioServerParameters(command=args.command[0], args=args.command[1:])
    return stdio_client(server)


async def list_once(args):
    info = Implementation(name=args.name, version=args.version) if args.name else None
    async with transport_of(args) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, client_info=info) as session:
            await session.initialize()
            result = await session.list_tools()
            names = [tool.name for tool in result.tools]
            while args.walk and result.next_cursor is not None:
                params = PaginatedRequestParams(cursor=result.next_cursor)
                result = await session.list_tools(params=params)
                names += [tool.name for tool in result.tools]
    return {
        "client": args.name or "mcp",
        "count": len(names),
        "names": names,
        "next_cursor": result.next_cursor is not None,
    }


def main():
    args = parse_args()
    print(json.dumps(anyio.run(list_once, args)))


if __name__ == "__main__":
    main()
