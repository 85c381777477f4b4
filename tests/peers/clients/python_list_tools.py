#!/usr/bin/env python3
"""List tools the way an app built on the Python `mcp` SDK does: one
`ClientSession.list_tools()` call (the SDK hands back one page; the caller
must loop, and most apps do not).

    python python_list_tools.py --url URL [--transport http|sse] [--name NAME] [--version V]
    python python_list_tools.py --transport stdio [--name NAME] [--version V] -- CMD ARGS...

Prints one JSON object on stdout: {"client", "count", "names", "next_cursor"}.
`next_cursor` says whether the page it saw carried one (the client ignored it).
Runs in tests/peers/python/.venv (installed by scripts/install-peers.sh).
"""

import argparse
import json

import anyio
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--transport", choices=["http", "sse", "stdio"], default="http")
    parser.add_argument("--name", default=None, help="clientInfo.name; the SDK's default (mcp 0.1.0) when absent")
    parser.add_argument("--version", default="0.1.0")
    parser.add_argument("command", nargs="*", help="stdio: the server's command and arguments, after --")
    args = parser.parse_args()
    if (args.transport == "stdio") != bool(args.command) or (args.transport != "stdio" and not args.url):
        parser.error("--url for http and sse; -- CMD ARGS... for stdio")
    return args


def transport_of(args):
    if args.transport == "http":
        return streamable_http_client(args.url)
    if args.transport == "sse":
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
