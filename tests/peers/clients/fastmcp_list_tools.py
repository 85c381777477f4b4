#!/usr/bin/env python3
"""List tools the way an app built on fastmcp (3 or newer) does: one
`Client.list_tools()` call, which follows nextCursor itself (250-page cap).

    python fastmcp_list_tools.py --url URL [--transport http|sse] [--name NAME] [--version V]

Prints one JSON object on stdout: {"client", "count", "names", "next_cursor"}
(`next_cursor` is always false: the walk hands back no cursor).
Runs in tests/peers/fastmcp/.venv (installed by scripts/install-peers.sh).
"""

import argparse
import json

import anyio
from fastmcp import Client
from fastmcp.client.transports import SSETransport, StreamableHttpTransport
from mcp_types import Implementation


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    parser.add_argument("--name", default=None, help="clientInfo.name; fastmcp's default when absent")
    parser.add_argument("--version", default="1.0.0")
    return parser.parse_args()


async def list_all(args):
    transport = StreamableHttpTransport(args.url) if args.transport == "http" else SSETransport(args.url)
    info = Implementation(name=args.name, version=args.version) if args.name else None
    async with Client(transport, client_info=info) as client:
        tools = await client.list_tools()
    names = [tool.name for tool in tools]
    return {"client": args.name or "fastmcp", "count": len(names), "names": names, "next_cursor": False}


def main():
    args = parse_args()
    print(json.dumps(anyio.run(list_all, args)))


if __name__ == "__main__":
    main()
