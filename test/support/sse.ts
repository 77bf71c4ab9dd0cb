import type { Caller, TestApp } from './app.js';
import { withTimeout } from './eventually.js';
import { publishAgentPaused } from './ws.js';

/** One server-sent event as yoga writes it: `event: next` with a result, or `event: complete`. */
export interface SseMessage {
  event: string;
  data: any;
}

/** A GraphQL subscription over server-sent events (`POST /graphql`, `Accept: text/event-stream`). */
export interface SseStream {
  status: number;
  headers: Headers;
  /** The next message not yet returned by `next` (rejects after `timeoutMs`, or when the stream ended first). */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Every message received so far. */
  received(): SseMessage[];
  /** Resolves once the server ends the stream (rejects after `timeoutMs`). */
  ended(timeoutMs?: number): Promise<void>;
  /** The client goes away. */
  close(): Promise<void>;
}

/** Parses `event:` / `data:` blocks; comments (yoga's `:` pings) are skipped. */
function parseBlock(block: string): SseMessage | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const [field, ...rest] = line.split(':');
    const value = rest.join(':').replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0 && event === 'message') return undefined;
  const text = data.join('\n');
  return { event, data: text ? JSON.parse(text) : null };
}

/**
 * Opens a subscription over SSE on a server started with `listen` (a real HTTP connection, so closing it is
 * what a browser going away does).
 */
export async function openSse(
  httpUrl: string,
  caller: Caller | null,
  query: string,
  variables?: Record<string, unknown>,
): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(`${httpUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(caller ? { authorization: `Bearer ${caller.token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  return readSse(response, abort);
}

/**
 * Reads a server-sent event stream as it arrives: the body of `response`, fetched with `abort`'s signal so
 * that `close` is the client going away. Any SSE answer: a GraphQL subscription, the MCP endpoint's stream.
 */
export function readSse(response: Response, abort: AbortController): SseStream {
  const messages: SseMessage[] = [];
  const listeners = new Set<() => void>();
  let isEnded = false;
  const notify = () => {
    for (const listener of listeners) listener();
  };
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffer += decoder.decode(read.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const message = parseBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (message) {
            messages.push(message);
            notify();
          }
        }
      }
    } catch {
      // The client aborted.
    }
    isEnded = true;
    notify();
  })();
  let cursor = 0;
  return {
    status: response.status,
    headers: response.headers,
    next(timeoutMs = 5000) {
      let check = () => {};
      const found = new Promise<SseMessage>((resolve, reject) => {
        check = () => {
          const message = messages[cursor];
          if (message) {
            listeners.delete(check);
            cursor += 1;
            resolve(message);
          } else if (isEnded) {
            listeners.delete(check);
            reject(new Error('the stream ended'));
          }
        };
        listeners.add(check);
        check();
      });
      // A wait that timed out must not take a later message.
      return withTimeout(found, timeoutMs, 'no message').finally(() => listeners.delete(check));
    },
    received: () => [...messages],
    ended(timeoutMs = 5000) {
      return withTimeout(done, timeoutMs, 'the stream did not end');
    },
    async close() {
      abort.abort();
      await done;
    },
  };
}

/**
 * Publishes `agentPaused` probes for `tenantId` until the SSE stream receives one (a subscription is live on
 * the server only some time after its request was sent), then skips past the probes.
 */
export async function untilSseDelivered(t: TestApp, stream: SseStream, tenantId: string) {
  for (let round = 0; stream.received().length === 0; round += 1) {
    if (round === 50) throw new Error('the SSE subscription never became live');
    await publishAgentPaused(t, tenantId, 'probe');
    await stream.next(100).catch(() => undefined);
  }
  while (await stream.next(0).catch(() => undefined)) {}
}

/** The next message that is not a probe of `untilSseDelivered` (a late probe may still arrive). */
export async function nextSseEvent(stream: SseStream, timeoutMs = 5000): Promise<SseMessage> {
  for (;;) {
    const message = await stream.next(timeoutMs);
    if (message.data?.data?.agentPaused?.role !== 'probe') return message;
  }
}
