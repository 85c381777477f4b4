#!/usr/bin/env python3
"""List tools the way an app built on the Python `mcp` SDK does: one
`ClientSession.list_tools()` call (the SDK hands back one page; the caller
must loop, and most apps do not).

    python python_list_tools.py --url URL [--transport http|sse] [--name NAME] [--version V]

Prints one JSON object on stdout: {"client", "count", "names", "next_cursor"}.
`next_cursor` says whether the page it saw carried one (the client ignored it).
Runs in tests/peers/python/.venv (installed by scripts/install-peers.sh).
"""

import argparse
import json

import anyio
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    parser.add_argument("--name", default=None, help="clientInfo.name; the SDK's default (mcp 0.1.0) when absent")
    parser.add_argument("--version", default="0.1.0")
    return parser.parse_args()


async def list_once(args):
    info = Implementation(name=args.name, version=args.version) if args.name else None
    transport = streamable_http_client(args.url) if args.transport == "http" else sse_client(args.url)
    async with transport as streams:
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
