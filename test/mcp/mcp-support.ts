import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningServer } from '../../src/server.js';
import type { Caller } from '../support/app.js';

/** An MCP client of the SDK, connected (initialized) to the server's `/mcp` with the caller's token. */
export async function connectMcp(server: RunningServer, caller: Caller | { token: string }): Promise<Client> {
  const client = new Client({ name: 'boardroom-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${caller.token}` } },
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
  const streaming = response.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
  const messages: any[] = [];
  const waiting = new Set<() => void>();
  let isEnded = !streaming;
  const wake = () => {
    for (const check of [...waiting]) check();
  };
  const done = streaming
    ? (async () => {
        const decoder = new TextDecoder();
        let buffer = '';
        try {
          const reader = (response.body as ReadableStream<Uint8Array>).getReader();
          for (let read = await reader.read(); !read.done; read = await reader.read()) {
            buffer += decoder.decode(read.value, { stream: true });
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              const data = buffer
                .slice(0, end)
                .split('\n')
                .filter((line) => line.startsWith('data:'))
                .map((line) => line.slice(5).trim())
                .join('\n');
              buffer = buffer.slice(end + 2);
              if (data) messages.push(JSON.parse(data));
              wake();
            }
          }
        } catch {
          // The client aborted.
        }
        isEnded = true;
        wake();
      })()
    : Promise.resolve();
  const within = <T>(promise: Promise<T>, timeoutMs: number, what: string) => {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  };
  let cursor = 0;
  return {
    status: response.status,
    headers: response.headers,
    json: () => response.json(),
    received: () => [...messages],
    next(timeoutMs = 5000) {
      let check = () => {};
      const found = new Promise<any>((resolve, reject) => {
        check = () => {
          if (cursor < messages.length) {
            waiting.delete(check);
            resolve(messages[cursor++]);
          } else if (isEnded) {
            waiting.delete(check);
            reject(new Error('the stream ended'));
          }
        };
        waiting.add(check);
        check();
      });
      return within(found, timeoutMs, 'no message').finally(() => waiting.delete(check));
    },
    ended: (timeoutMs = 5000) => within(done, timeoutMs, 'the stream did not end'),
    async close() {
      abort.abort();
      await done;
    },
  };
}
