// An app on the TypeScript SDK 2.x client (@modelcontextprotocol/client), as
// check-client runs it: the server is MCP_SERVER_URL or the argv in
// MCP_SERVER_COMMAND (stdio); one `Client.listTools()` call, which walks
// every page itself; prints the tool count.
//
//   mcp-exporter check-client -- node check-ts2.mjs
//   mcp-exporter check-client --transport stdio -- node check-ts2.mjs
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const url = process.env.MCP_SERVER_URL;
const [command, ...args] = url ? [] : JSON.parse(process.env.MCP_SERVER_COMMAND);
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command, args });
const client = new Client({ name: "check-ts2", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
await client.close();
console.log(tools.length);
