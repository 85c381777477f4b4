#!/usr/bin/env python3
"""An app on the Python `mcp` SDK (1.x or 2.x), as check-client runs it: the
server is MCP_SERVER_URL (Streamable HTTP) or the argv in MCP_SERVER_COMMAND
(stdio); one `ClientSession.list_tools()` call; prints the tool count.

    mcp-exporter check-client -- python check_python_sdk.py
    mcp-exporter check-client --transport stdio -- python check_python_sdk.py
"""

import json
import os

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def transport():
    if "MCP_SERVER_URL" in os.environ:
        return streamable_http_client(os.environ["MCP_SERVER_URL"])
    command, *args = json.loads(os.environ["MCP_SERVER_COMMAND"])
    return stdio_client(StdioServerParameters(command=command, args=args))


async def main():
    async with transport() as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            result = await session.list_tools()
    print(len(result.tools))


anyio.run(main)
