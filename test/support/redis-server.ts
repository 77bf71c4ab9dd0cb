import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A redis-server of the test's own on a loopback port, without persistence, that can be killed and restarted. */
export interface RedisServer {
  url: string;
  /** Starts it (again, on the same port); resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGKILL, as an outage would; resolves once it has exited. */
  kill(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function createRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    start() {
      const started = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child = started;
      return new Promise((resolve, reject) => {
        let output = '';
        started.stdout?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('Ready to accept connections')) resolve();
        });
        started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
      });
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
  };
}
