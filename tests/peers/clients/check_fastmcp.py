#!/usr/bin/env python3
"""An app on fastmcp (2.14, or 3 and newer), as check-client runs it: the
server is MCP_SERVER_URL or the argv in MCP_SERVER_COMMAND (stdio); one
`Client.list_tools()` call; prints the tool count.

    mcp-exporter check-client -- python check_fastmcp.py
    mcp-exporter check-client --transport stdio -- python check_fastmcp.py
"""

import json
import os

import anyio
from fastmcp import Client
from fastmcp.client.transports import StdioTransport


def server():
    if "MCP_SERVER_URL" in os.environ:
        return os.environ["MCP_SERVER_URL"]
    command, *args = json.loads(os.environ["MCP_SERVER_COMMAND"])
    return StdioTransport(command=command, args=args)


async def main():
    async with Client(server()) as client:
        tools = await client.list_tools()
    print(len(tools))


anyio.run(main)
