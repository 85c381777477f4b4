// List tools the way an app built on the TypeScript SDK 1.x does: one
// `Client.listTools()` call (one page; the caller must loop).
//
//   node ts1-list-tools.mjs --url URL [--transport http|sse] [--name NAME] [--version V]
//   node ts1-list-tools.mjs --transport stdio [--name NAME] [--version V] -- CMD ARGS...
//
// Prints one JSON object on stdout: {"client", "count", "names", "next_cursor"}.
// Uses @modelcontextprotocol/sdk from tests/peers/node_modules.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { parseArgs, printSaw } from "./args.mjs";

const args = parseArgs(process.argv.slice(2), "ts-sdk-1");
const transport =
  args.transport === "stdio"
    ? new StdioClientTransport({ command: args.command[0], args: args.command.slice(1), stderr: "inherit" })
    : args.transport === "sse"
      ? new SSEClientTransport(new URL(args.url))
      : new StreamableHTTPClientTransport(new URL(args.url));
const client = new Client({ name: args.name, version: args.version });
await client.connect(transport);
const result = await client.listTools();
// close() as apps do when they are done; what it sends (or not) is the SDK's.
await client.close();
printSaw(args, result);
