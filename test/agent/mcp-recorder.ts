import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One JSON-RPC `tools/call` that reached Boardroom's `/mcp` through the recorder. */
export interface RecordedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * An HTTP proxy on loopback in front of a Boardroom server: forwards every request as it is and records the
 * `tools/call` messages posted to `/mcp`, so a test sees exactly which tools an MCP client called.
 */
export async function startMcpRecorder(target: string) {
  const upstream = new URL(target);
  const calls: RecordedToolCall[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      if (incoming.method === 'POST' && incoming.url === '/mcp' && body.length > 0) {
        const parsed = JSON.parse(body.toString('utf8'));
        for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
          if (message?.method === 'tools/call') {
            calls.push({ name: message.params?.name, arguments: message.params?.arguments ?? {} });
          }
        }
      }
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, host: upstream.host },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      outgoing.on('close', () => forwarded.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
