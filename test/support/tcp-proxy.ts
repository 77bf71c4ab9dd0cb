import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/**
 * A loopback TCP proxy in front of a real server, to take that server away from an app without touching
 * it: `stop()` closes the proxy (new connections are refused, open ones are reset: a stopped server),
 * `hang()` keeps every connection open but forwards nothing either way and accepts new connections
 * without answering them (a server frozen with SIGSTOP), `resume()` forwards again on the same port.
 */
export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string;
  stop(): Promise<void>;
  hang(): void;
  resume(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | undefined;
  /** Bytes held while hung, per direction. */
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let hung = false;
  let server: Server | undefined;
  let port = 0;

  const openUpstream = (pair: Pair) => {
    const upstream = tcpConnect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('data', (chunk: Buffer) => {
      if (hung) pair.toClient.push(chunk);
      else pair.client.write(chunk);
    });
    upstream.on('error', () => pair.client.destroy());
    upstream.on('close', () => {
      pairs.delete(pair);
      pair.client.destroy();
    });
    for (const chunk of pair.toUpstream.splice(0)) upstream.write(chunk);
  };

  const accept = (client: Socket) => {
    const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [] };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (hung || !pair.upstream) pair.toUpstream.push(chunk);
      else pair.upstream.write(chunk);
    });
    client.on('error', () => pair.upstream?.destroy());
    client.on('close', () => {
      pairs.delete(pair);
      pair.upstream?.destroy();
    });
    if (!hung) openUpstream(pair);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(accept);
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        server = next;
        port = (next.address() as { port: number }).port;
        resolve();
      });
    });
  const closeListener = () =>
    new Promise<void>((resolve) => {
      const current = server;
      server = undefined;
      if (!current) return resolve();
      current.close(() => resolve());
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
    });

  await listen();
  return {
    get port() {
      return port;
    },
    rewrite(url) {
      const rewritten = new URL(url);
      rewritten.hostname = '127.0.0.1';
      rewritten.port = String(port);
      return rewritten.toString();
    },
    stop: closeListener,
    hang() {
      hung = true;
    },
    async resume() {
      hung = false;
      if (!server) await listen();
      for (const pair of pairs) {
        if (!pair.upstream) openUpstream(pair);
        else for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
        for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
      }
    },
    close: closeListener,
  };
}
