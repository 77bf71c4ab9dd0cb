import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningServer } from '../../src/server.js';
import type { Caller } from '../support/app.js';
import { readSse } from '../support/sse.js';

/** The answer to a batch of JSON-RPC messages, which the endpoint refuses (with 400). */
export const BATCH_REFUSED = {
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32600,
    message: 'Invalid Request: a batch of JSON-RPC messages is not accepted; send one message per request',
  },
};

/**
 * An MCP client of the SDK, connected (initialized) to the server's `/mcp` with the caller's token and any
 * other `headers` (an `Origin`).
 */
export async function connectMcp(
  server: RunningServer,
  caller: Caller | { token: string },
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'boardroom-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${caller.token}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

/** A tool's structured result, or its error result. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult & { structuredContent?: any }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Posts a raw body to `/mcp` (what no SDK client would send). */
export async function postMcp(
  server: RunningServer,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed, headers: response.headers };
}

/** `GET /mcp` read as a raw stream: the JSON-RPC messages of its server-sent events. */
export interface RawToolListStream {
  status: number;
  headers: Headers;
  /** The answer's JSON body, when it is no stream (a refusal). */
  json(): Promise<any>;
  /** JSON-RPC messages received so far. */
  received(): any[];
  /** Resolves with the next message not yet returned (rejects after `timeoutMs` or when the stream ends). */
  next(timeoutMs?: number): Promise<any>;
  /** Resolves once the server ends the stream (rejects after `timeoutMs`). */
  ended(timeoutMs?: number): Promise<void>;
  /** The client goes away. */
  close(): Promise<void>;
}

export async function openToolListStream(
  server: RunningServer,
  caller: Caller | { token: string } | null,
  headers: Record<string, string> = { accept: 'text/event-stream' },
): Promise<RawToolListStream> {
  const abort = new AbortController();
  const response = await fetch(`${server.url}/mcp`, {
    headers: { ...headers, ...(caller ? { authorization: `Bearer ${caller.token}` } : {}) },
    signal: abort.signal,
  });
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return {
      status: response.status,
      headers: response.headers,
      json: () => response.json(),
      received: () => [],
      next: () => Promise.reject(new Error('the stream ended')),
      ended: () => Promise.resolve(),
      close: async () => abort.abort(),
    };
  }
  const stream = readSse(response, abort);
  return {
    status: response.status,
    headers: response.headers,
    json: () => response.json(),
    received: () => stream.received().map((message) => message.data),
    next: async (timeoutMs) => (await stream.next(timeoutMs)).data,
    ended: (timeoutMs) => stream.ended(timeoutMs),
    close: () => stream.close(),
  };
}
