// List tools the way an app built on the TypeScript SDK 2.x client
// (@modelcontextprotocol/client) does: one `Client.listTools()` call, which
// in 2.x follows nextCursor itself (64-page cap, stops on a repeated cursor).
//
//   node ts2-list-tools.mjs --url URL [--transport http|sse] [--name NAME] [--version V]
//
// Prints one JSON object on stdout: {"client", "count", "names", "next_cursor"}.
// Uses @modelcontextprotocol/client from tests/peers/node_modules.
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { parseArgs, printSaw } from "./args.mjs";

const args = parseArgs(process.argv.slice(2), "ts-sdk-2");
if (args.transport === "stdio") {
  console.error("this peer lists over HTTP only");
  process.exit(2);
}
const url = new URL(args.url);
const transport =
  args.transport === "sse" ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
const client = new Client({ name: args.name, version: args.version });
await client.connect(transport);
const result = await client.listTools();
// close() as apps do when they are done; what it sends (or not) is the SDK's.
await client.close();
printSaw(args, result);
