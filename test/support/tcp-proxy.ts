import { createServer, type Server, Socket } from 'node:net';

/**
 * A loopback TCP proxy to `target` that a test can cut and restore: cutting closes every connection
 * through it and refuses new ones, as a network partition between one instance and a service would.
 */
export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function createTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const serve = () =>
    createServer((client) => {
      const upstream = new Socket();
      upstream.connect(targetPort, '127.0.0.1');
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        open.add(from);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          open.delete(from);
          to.destroy();
        });
        from.pipe(to);
      }
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  let server: Server | undefined = serve();
  const port = await listen(server, 0);
  const stop = async () => {
    const running = server;
    server = undefined;
    for (const socket of open) socket.destroy();
    if (running) await new Promise((resolve) => running.close(resolve));
  };
  return {
    port,
    cut: stop,
    async restore() {
      if (server) return;
      server = serve();
      await listen(server, port);
    },
    close: stop,
  };
}
