import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { type RunningServer, startServer } from '../../src/server.js';
import type { Caller, TestApp } from './app.js';

/** Serves a test app on an ephemeral port (WebSocket tests need a real socket). */
export function listen(t: TestApp): Promise<RunningServer> {
  return startServer(t.app, 0, '127.0.0.1');
}

export interface Subscription<Result> {
  /** The next result, or a rejection after `timeoutMs`. */
  next(timeoutMs?: number): Promise<ExecutionResult<Result>>;
  /** True when nothing arrives within `ms` (for "receives nothing" checks). */
  quietFor(ms: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens a graphql-ws subscription as `caller` and queues what it receives. */
export async function subscribe<Result, Variables>(
  httpUrl: string,
  caller: Caller,
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<Subscription<Result>> {
  const client: Client = createClient({
    url: `${httpUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${caller.token}` },
    lazy: false,
    retryAttempts: 0,
  });
  const queue: ExecutionResult<Result>[] = [];
  const waiters: ((value: ExecutionResult<Result>) => void)[] = [];
  let failure: unknown;
  const subscribed = new Promise<void>((resolve) => {
    client.on('connected', () => resolve());
  });
  client.subscribe(
    { query: print(document as never), variables: variables as Record<string, unknown> },
    {
      next: (value) => {
        const result = value as ExecutionResult<Result>;
        const waiter = waiters.shift();
        if (waiter) waiter(result);
        else queue.push(result);
      },
      error: (error) => {
        failure = error;
      },
      complete: () => {},
    },
  );
  await subscribed;
  // Let the server register the subscription before the test acts.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return {
    next(timeoutMs = 5000) {
      if (failure) return Promise.reject(failure);
      const ready = queue.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise<ExecutionResult<Result>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((value) => {
          clearTimeout(timer);
          resolve(value);
        });
      });
    },
    async quietFor(ms) {
      if (queue.length > 0) return false;
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(true), ms);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(false);
        });
      });
    },
    async close() {
      await client.dispose();
    },
  };
}

/** Opens a raw socket, sends connection_init with `payload` and resolves with the close code. */
export function closeCodeFor(httpUrl: string, payload: Record<string, unknown>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${httpUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload })));
    socket.on('close', (code) => resolve(code));
    socket.on('error', reject);
  });
}
