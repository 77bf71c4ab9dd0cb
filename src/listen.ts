import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A port the server cannot listen on (taken, not permitted, no such address): start-up stops with it. */
export class ListenError extends Error {
  override name = 'ListenError';
}

const causes: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'the address is not available on this machine',
};

/** Listens on `host:port` and resolves to the URL it serves, or rejects with a ListenError naming both. */
export function listenOn(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const cause = (error.code && causes[error.code]) ?? error.message;
      reject(new ListenError(`cannot listen on ${host}:${port}: ${cause}`, { cause: error }));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address() as AddressInfo;
      resolve(
        `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
      );
    });
  });
}
