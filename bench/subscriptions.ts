// Subscription fan-out: fresh gateways (one, or two sharing PostgreSQL and Redis) and `bench/fanout.ts`
// in a process of its own, which connects the clients over graphql-ws, publishes events through the API
// and reports delivery times, missed events and the servers' memory. This file only starts the servers
// and the script and reads its one JSON line.
import { spawn } from 'node:child_process';
import { onCleanup } from './processes.js';
import { type DatabaseKind, type Gateway, mintCaller, startGateway } from './servers.js';

export interface FanoutReport {
  clients: number;
  instances: number;
  events: number;
  missed: number;
  deliveryMs: { p50: number; p99: number; max: number };
  perEvent: { p99Ms: number; maxMs: number; missed: number; rssMb: Record<string, number> }[];
  rssMbBefore: Record<string, number>;
}

export interface FanoutCase {
  clients: number;
  instances: 1 | 2;
  database: DatabaseKind;
  events: number;
}

/** Runs `npx tsx bench/fanout.ts …` and parses the JSON line it prints; fails after `timeoutMs`. */
function runFanoutScript(args: string[], timeoutMs: number): Promise<FanoutReport> {
  // Thousands of sockets: lift the open-file limit of the client process where the system allows it.
  const child = spawn(
    'sh',
    ['-c', 'ulimit -n 65536 2>/dev/null; exec npx tsx bench/fanout.ts "$@"', 'sh', ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  return exited.then((code) => {
    clearTimeout(timer);
    const line = output
      .trim()
      .split('\n')
      .reverse()
      .find((candidate) => candidate.startsWith('{'));
    if (code !== 0 || !line) throw new Error(`bench/fanout.ts exited with ${code}: ${output.slice(-2000)}`);
    return JSON.parse(line) as FanoutReport;
  });
}

export async function measureFanout(
  fanout: FanoutCase,
  runDir: string,
  postgresUrl: string,
  redisUrl: string | undefined,
): Promise<FanoutReport> {
  const env = {
    // One caller holds every client's socket: the per-caller socket limit would refuse all but 20.
    WS_MAX_SOCKETS_PER_CALLER: String(fanout.clients + 100),
  };
  const name = `fanout-${fanout.database}-${fanout.clients}x${fanout.instances}`;
  const gateways: Gateway[] = [
    await startGateway({ name, database: fanout.database, runDir, postgresUrl, redisUrl, env }),
  ];
  if (fanout.instances === 2) {
    if (fanout.database !== 'postgres' || !redisUrl)
      throw new Error('two instances need PostgreSQL and Redis');
    gateways.push(
      await startGateway({
        name: `${name}-b`,
        database: 'postgres',
        runDir,
        postgresUrl,
        redisUrl,
        env,
        reuse: { databaseUrl: gateways[0]?.databaseUrl },
      }),
    );
  }
  try {
    const caller = await mintCaller();
    const args = [
      '--url',
      gateways[0]?.url ?? '',
      '--token',
      caller.token,
      '--clients',
      String(fanout.clients),
      '--events',
      String(fanout.events),
      '--pids',
      gateways.map((gateway) => gateway.pid).join(','),
    ];
    if (gateways.length > 1) args.push('--urls', gateways.map((gateway) => gateway.url).join(','));
    return await runFanoutScript(args, 15 * 60_000);
  } finally {
    for (const gateway of gateways) await gateway.stop();
  }
}
