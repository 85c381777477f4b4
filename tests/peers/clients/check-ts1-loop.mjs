// An app on the TypeScript SDK 1.x that walks nextCursor itself, with no
// guard (no page cap, no cycle check), as many apps write it; as
// check-client runs it (MCP_SERVER_URL, or the argv in MCP_SERVER_COMMAND);
// prints the tool count. Against a cursor that never ends it never returns.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.MCP_SERVER_URL;
const [command, ...args] = url ? [] : JSON.parse(process.env.MCP_SERVER_COMMAND);
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command, args });
const client = new Client({ name: "check-ts1-loop", version: "1.0.0" });
await client.connect(transport);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
await client.close();
console.log(tools.length);
