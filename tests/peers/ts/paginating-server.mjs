#!/usr/bin/env node
// A TypeScript SDK (low-level `Server`) MCP server that paginates all four
// list kinds, for mcp-exporter's interop tests.
//
//   node paginating-server.mjs                 stdio
//   node paginating-server.mjs http [PORT]     Streamable HTTP on 127.0.0.1:PORT/mcp
//                                              (PORT from argv, else $PORT, else 0 = any free
//                                              port); prints "listening on
//                                              http://127.0.0.1:PORT" to stderr once bound.
//
// Catalogue (identical in the Python and rmcp peers so the tests share one table):
//   tools              tool_00 .. tool_22                        23 items, 5 per page
//   prompts            prompt_0 .. prompt_6                       7 items, 3 per page
//   resources          test://paginating/resource/00 .. /11      12 items, 5 per page
//   resource templates test://paginating/template/0/{id} .. /3/   4 items, 3 per page
// Cursors are opaque (base64url of "<kind>:<offset>"); anything else is -32602.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ErrorCode,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';

const SERVER_INFO = { name: 'paginating-ts', version: '1.0.0' };

const pad2 = (i) => String(i).padStart(2, '0');
const range = (n) => Array.from({ length: n }, (_, i) => i);

const CATALOGUE = {
  tools: {
    pageSize: 5,
    items: range(23).map((i) => ({
      name: `tool_${pad2(i)}`,
      description: `Paginated test tool ${i}`,
      inputSchema: { type: 'object', properties: {} },
    })),
  },
  prompts: {
    pageSize: 3,
    items: range(7).map((i) => ({ name: `prompt_${i}`, description: `Paginated test prompt ${i}` })),
  },
  resources: {
    pageSize: 5,
    items: range(12).map((i) => ({
      uri: `test://paginating/resource/${pad2(i)}`,
      name: `resource_${pad2(i)}`,
      mimeType: 'text/plain',
    })),
  },
  resourceTemplates: {
    pageSize: 3,
    items: range(4).map((i) => ({
      uriTemplate: `test://paginating/template/${i}/{id}`,
      name: `template_${i}`,
    })),
  },
};

function encodeCursor(kind, offset) {
  return Buffer.from(`${kind}:${offset}`, 'utf8').toString('base64url');
}

// Returns the offset a cursor points at, or throws -32602 for anything this
// server did not hand out for this kind.
function decodeCursor(kind, cursor) {
  const { pageSize, items } = CATALOGUE[kind];
  const match = /^([A-Za-z]+):(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const offset = match ? Number(match[2]) : NaN;
  if (!match || match[1] !== kind || offset <= 0 || offset >= items.length || offset % pageSize !== 0) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${JSON.stringify(cursor)}`);
  }
  return offset;
}

function page(kind, params) {
  const { pageSize, items } = CATALOGUE[kind];
  const cursor = params?.cursor;
  const offset = cursor === undefined ? 0 : decodeCursor(kind, cursor);
  const next = offset + pageSize;
  const result = { [kind]: items.slice(offset, next) };
  if (next < items.length) result.nextCursor = encodeCursor(kind, next);
  return result;
}

function buildServer() {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, prompts: {}, resources: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => page('tools', req.params));
  server.setRequestHandler(ListPromptsRequestSchema, async (req) => page('prompts', req.params));
  server.setRequestHandler(ListResourcesRequestSchema, async (req) => page('resources', req.params));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (req) =>
    page('resourceTemplates', req.params),
  );
  return server;
}

async function readJsonBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length === 0 ? undefined : JSON.parse(text);
}

function sendJsonRpcError(res, status, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function serveHttp(port) {
  // One SDK transport (and one Server) per MCP session, as the SDK expects.
  const sessions = new Map();

  const httpServer = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const sessionId = req.headers['mcp-session-id'];
      if (req.method === 'POST') {
        const body = await readJsonBody(req);
        if (sessionId !== undefined) {
          const transport = sessions.get(sessionId);
          if (!transport) return sendJsonRpcError(res, 404, 'Session not found');
          return await transport.handleRequest(req, res, body);
        }
        if (!isInitializeRequest(body)) {
          return sendJsonRpcError(res, 400, 'Bad Request: no session id and not an initialize request');
        }
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
        return await transport.handleRequest(req, res, body);
      }
      if (req.method === 'GET' || req.method === 'DELETE') {
        const transport = sessionId === undefined ? undefined : sessions.get(sessionId);
        if (!transport) return sendJsonRpcError(res, sessionId === undefined ? 400 : 404, 'Session not found');
        return await transport.handleRequest(req, res);
      }
      res.writeHead(405, { Allow: 'GET, POST, DELETE' }).end();
    } catch (err) {
      if (!res.headersSent) sendJsonRpcError(res, 400, `Bad Request: ${err.message}`);
      else res.end();
    }
  });

  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, '127.0.0.1', resolve);
  });
  process.stderr.write(`listening on http://127.0.0.1:${httpServer.address().port}\n`);

  const shutdown = () => {
    for (const transport of sessions.values()) transport.close().catch(() => {});
    httpServer.close(() => process.exit(0));
    // Open keep-alive connections must not hold the process up.
    httpServer.closeAllConnections();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

async function main() {
  const [mode = 'stdio', portArg] = process.argv.slice(2);
  if (mode === 'stdio') {
    await buildServer().connect(new StdioServerTransport());
  } else if (mode === 'http') {
    const port = Number(portArg ?? process.env.PORT ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`invalid port: ${portArg ?? process.env.PORT}\n`);
      process.exit(2);
    }
    await serveHttp(port);
  } else {
    process.stderr.write('usage: paginating-server.mjs [stdio | http [PORT]]\n');
    process.exit(2);
  }
}

main().catch((err) => {
  process.stderr.write(`paginating-server: ${err.stack ?? err}\n`);
  process.exit(1);
});
