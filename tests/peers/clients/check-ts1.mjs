// An app on the TypeScript SDK 1.x, as check-client runs it: the server is
// MCP_SERVER_URL (Streamable HTTP) or the argv in MCP_SERVER_COMMAND
// (stdio); one `Client.listTools()` call; prints the tool count.
//
//   mcp-exporter check-client -- node check-ts1.mjs
//   mcp-exporter check-client --transport stdio -- node check-ts1.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.MCP_SERVER_URL;
const [command, ...args] = url ? [] : JSON.parse(process.env.MCP_SERVER_COMMAND);
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command, args });
const client = new Client({ name: "check-ts1", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
await client.close();
console.log(tools.length);
