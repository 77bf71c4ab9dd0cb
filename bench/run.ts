// npm run bench: the built server (`node dist/main.js`, NODE_ENV=production) on PGlite and on PostgreSQL,
// each in a process of its own, loaded from another process and compared with bare graphql-yoga in
// interleaved rounds; then ingestion at scale, subscription fan-out, start-up and idle memory.
// `npm run bench -- --help` lists the options; bench/README.md explains each case.
import { mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { measureA2a } from './a2a.js';
import { measureAgentRuntime } from './agent-runtime.js';
import { measureAgentTelemetry } from './agent-telemetry.js';
import { measureClaimWake } from './claim-wait.js';
import { measureDelegation } from './delegation.js';
import { baselineJob, throughputCases, transportCases } from './domains.js';
import { measureIngestion } from './experiments.js';
import { measurePropagation } from './finetuning.js';
import { measureIdleWaiters } from './idle-waiters.js';
import type { LoadJob } from './load.js';
import { measureMcpCalls } from './mcp.js';
import {
  interleave,
  LoadClient,
  type Loader,
  median,
  medianCpuRatio,
  medianRatio,
  summarize,
  type Target,
} from './measure.js';
import { type BenchReport, printReport, type ThroughputReport, type TransportReport } from './print.js';
import {
  backendPids,
  cleanUp,
  cleanUpOnSignals,
  interrupted,
  root,
  runDirectory,
  sweepDatabases,
} from './processes.js';
import { type QueueRound, queueRound } from './queue.js';
import { type QueueReference, type QueueReferenceRound, startQueueReference } from './queue-reference.js';
import { measureRoutineTicks } from './routines.js';
import { DATABASE_NAMES, type DatabaseKind, type Gateway, startBareYoga, startGateway } from './servers.js';
import { measureStartup } from './startup.js';
import { type FanoutCase, measureFanout } from './subscriptions.js';
import { measureTaskRuns } from './task-runs.js';
import { measureToolList } from './tool-list.js';
import { measureWebhookFairness, measureWebhookLatency } from './webhooks.js';

const CASES = [
  ...throughputCases.map((c) => c.id),
  ...transportCases.map((c) => c.id),
  'ingestion',
  'fanout',
  'propagation',
  'webhooks',
  'mcp',
  'tool-list',
  'a2a',
  'delegation',
  'task-runs',
  'agent-runtime',
  'agent-telemetry',
  'claim-wait',
  'idle-waiters',
  'queue',
  'routines',
  'startup',
];
const usage = `usage: npm run bench -- [options]
  --cases a,b         ${CASES.join(', ')} (default: all)
  --databases a,b     pglite, postgres, or both (the default)
  --quick             short rounds, 100,000 events, 1,000 subscribers, one start-up sample, 3 s idle
                      windows, 3 delegation rounds instead of 5 (~4 min)
  --rounds N          interleaved rounds per case (default 3; at least 3)
  --seconds S         length of each measured run (default 4; quick 1)
  --warmup S          warm-up per target before the rounds (default 2; quick 1)
  --events N          events ingested by the scale case (default 1000000; quick 100000)
  --fanout N,M        subscribers per fan-out run on one instance (default 1000,10000; quick 1000)
  --fanout-pair N     subscribers across two instances on PostgreSQL + Redis (default 20000; 0: skip)
  --loader L          autocannon (default), wrk, or both in the same rounds (wrk: fixed requests only;
                      to cross-check the load generator)
  --postgres URL      PostgreSQL server whose databases the run creates and drops
                      (default BENCH_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres)
  --redis URL         Redis for the two-instance fan-out (default BENCH_REDIS_URL or redis://127.0.0.1:6379)
  --out FILE          JSON results (default bench-results/bench-<time>.json)`;

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        cases: { type: 'string' },
        databases: { type: 'string', default: 'pglite,postgres' },
        quick: { type: 'boolean', default: false },
        rounds: { type: 'string' },
        seconds: { type: 'string' },
        warmup: { type: 'string' },
        events: { type: 'string' },
        fanout: { type: 'string' },
        'fanout-pair': { type: 'string' },
        loader: { type: 'string', default: 'autocannon' },
        postgres: { type: 'string' },
        redis: { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
})();
if (values.help) {
  console.log(usage);
  process.exit(0);
}
function refuse(problem: string): never {
  console.error(`${problem}\n${usage}`);
  process.exit(2);
}
const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
const count = (name: string, value: string | undefined, fallback: number, min = 0) => {
  const parsed = value === undefined ? fallback : Number(value);
  if (!Number.isFinite(parsed) || parsed < min) refuse(`--${name} must be a number ≥ ${min}`);
  return parsed;
};

const quick = values.quick;
const cases = values.cases ? list(values.cases) : CASES;
const databases = (
  values.databases === 'both' ? ['pglite', 'postgres'] : list(values.databases)
) as DatabaseKind[];
for (const id of cases) if (!CASES.includes(id)) refuse(`unknown case ${id}`);
for (const database of databases) if (!(database in DATABASE_NAMES)) refuse(`unknown database ${database}`);
if (!['autocannon', 'wrk', 'both'].includes(values.loader)) refuse('--loader is autocannon, wrk or both');
const loaders: Loader[] = values.loader === 'both' ? ['autocannon', 'wrk'] : [values.loader as Loader];
const plan = {
  rounds: count('rounds', values.rounds, 3, 3),
  seconds: count('seconds', values.seconds, quick ? 1 : 4, 0.5),
  warmupSeconds: count('warmup', values.warmup, quick ? 1 : 2, 0.5),
  loader: loaders[0] ?? 'autocannon',
};
const ingestEvents = count('events', values.events, quick ? 100_000 : 1_000_000, 10_000);
const fanoutClients = (values.fanout ? list(values.fanout) : quick ? ['1000'] : ['1000', '10000']).map((n) =>
  count('fanout', n, 0, 1),
);
const fanoutPair = count('fanout-pair', values['fanout-pair'], quick ? 0 : 20_000);
const fanoutEvents = quick ? 3 : 5;
const postgresUrl =
  values.postgres ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = values.redis ?? process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const out = path.resolve(
  values.out ??
    path.join(root, 'bench-results', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
);

/** Answers whether a Redis server answers PING at `url`. */
function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port || 6379), hostname, () => socket.write('PING\r\n'));
    socket.setTimeout(2000, () => socket.destroy());
    socket.once('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.destroy();
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

const report: BenchReport = {
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtStart: os.loadavg(),
    startedAt: new Date().toISOString(),
  },
  plan: {
    cases,
    databases,
    ...plan,
    loader: values.loader,
    ingestEvents,
    fanoutClients,
    fanoutPair,
    fanoutEvents,
  },
  throughput: {},
  transports: {},
  ingestion: {},
  fanout: [],
  taskRuns: [],
  claimWait: [],
  idleWaiters: [],
  queue: [],
  startup: {},
  errors: [],
};

async function attempt(name: string, run: () => Promise<void>): Promise<void> {
  if (interrupted()) return;
  const started = performance.now();
  console.error(`bench: ${name}…`);
  try {
    await run();
    console.error(`bench: ${name}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } catch (error) {
    if (interrupted()) return;
    console.error(`bench: ${name}: failed: ${(error as Error).message}`);
    report.errors.push({ case: name, error: (error as Error).message });
  }
}

cleanUpOnSignals();
try {
  if (databases.includes('postgres')) await sweepDatabases(postgresUrl);
  const runDir = await runDirectory();
  const client = new LoadClient();
  const throughput = throughputCases.filter((c) => cases.includes(c.id));
  const transports = transportCases.filter((c) => cases.includes(c.id));
  if (throughput.length > 0 || transports.length > 0 || cases.includes('ingestion')) {
    const bare = await startBareYoga(runDir);
    const gateways: Gateway[] = [];
    for (const database of databases) {
      gateways.push(await startGateway({ name: `gateway-${database}`, database, runDir, postgresUrl }));
    }
    const helpersOf = (gateway: Gateway) => {
      const name = gateway.databaseName;
      return name ? () => backendPids(postgresUrl, name) : undefined;
    };
    for (const bench of throughput) {
      await attempt(bench.title, async () => {
        const targets: Target[] = [];
        const jobs = new Map<Gateway, LoadJob>();
        for (const gateway of gateways) jobs.set(gateway, await bench.prepare(gateway, client));
        for (const loader of loaders) {
          // With both loaders, wrk's targets carry a suffix; wrk cannot vary requests (rotating callers).
          const suffix = loaders.length > 1 && loader === 'wrk' ? '@wrk' : '';
          if (loader === 'wrk' && [...jobs.values()].some((job) => job.rotateAuthorization)) continue;
          const base = baselineJob(bare.url, bench.connections);
          targets.push({ name: `bare-yoga${suffix}`, pid: bare.pid, job: base, loader });
          for (const [gateway, job] of jobs) {
            const helpers = helpersOf(gateway);
            targets.push({
              name: `${gateway.database}${suffix}`,
              pid: gateway.pid,
              job,
              loader,
              ...(helpers ? { helpers } : {}),
            });
          }
        }
        const seconds = Math.max(plan.seconds, bench.minSeconds ?? 0);
        const samples = await interleave(targets, { ...plan, seconds }, client, runDir);
        const gatewayTargets = targets.filter((target) => !target.name.startsWith('bare-yoga'));
        const baseOf = (name: string) => samples[name.includes('@wrk') ? 'bare-yoga@wrk' : 'bare-yoga'] ?? [];
        const entry: ThroughputReport = {
          title: bench.title,
          connections: bench.connections,
          targets: Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)])),
          ratioToBareYoga: Object.fromEntries(
            gatewayTargets.map(({ name }) => [name, medianRatio(samples[name] ?? [], baseOf(name))]),
          ),
          cpuRatioToBareYoga: Object.fromEntries(
            gatewayTargets.map(({ name }) => [name, medianCpuRatio(samples[name] ?? [], baseOf(name))]),
          ),
        };
        if (bench.compareDatabases && samples.pglite && samples.postgres) {
          entry.pgliteToPostgres = medianRatio(samples.pglite, samples.postgres);
        }
        report.throughput[bench.id] = entry;
      });
    }
    for (const bench of transports) {
      await attempt(bench.title, async () => {
        const targets: Target[] = [];
        for (const gateway of gateways) {
          const jobs = await bench.prepare(gateway);
          const helpers = helpersOf(gateway);
          for (const [transport, job] of Object.entries(jobs)) {
            targets.push({
              name: `${gateway.database}-${transport}`,
              pid: gateway.pid,
              job,
              loader: 'autocannon',
              ...(helpers ? { helpers } : {}),
            });
          }
        }
        const seconds = Math.max(plan.seconds, bench.minSeconds ?? 0);
        const samples = await interleave(targets, { ...plan, seconds }, client, runDir);
        const entry: TransportReport = {
          title: bench.title,
          connections: bench.connections,
          targets: Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)])),
          restToGraphql: {},
          restToGraphqlP50: {},
        };
        for (const gateway of gateways) {
          const rest = samples[`${gateway.database}-rest`] ?? [];
          const graphql = samples[`${gateway.database}-graphql`] ?? [];
          entry.restToGraphql[gateway.database] = medianRatio(rest, graphql);
          entry.restToGraphqlP50[gateway.database] = median(
            rest.map((sample, round) => sample.p50Ms / (graphql[round]?.p50Ms ?? Number.NaN)),
          );
        }
        report.transports[bench.id] = entry;
      });
    }
    if (cases.includes('ingestion')) {
      for (const gateway of gateways) {
        await attempt(
          `ingestion of ${ingestEvents.toLocaleString('en')} events on ${DATABASE_NAMES[gateway.database]}`,
          async () => {
            report.ingestion[gateway.database] = await measureIngestion(
              client,
              gateway,
              ingestEvents,
              plan.seconds,
            );
          },
        );
      }
    }
    for (const gateway of gateways) await gateway.stop();
    await bare.stop();
  }
  if (cases.includes('fanout')) {
    const runs: FanoutCase[] = databases.flatMap((database) =>
      fanoutClients.map((clients) => ({ clients, instances: 1 as const, database, events: fanoutEvents })),
    );
    if (fanoutPair > 0 && databases.includes('postgres')) {
      if (await redisAnswers(redisUrl)) {
        runs.push({ clients: fanoutPair, instances: 2, database: 'postgres', events: fanoutEvents });
      } else {
        report.errors.push({ case: 'fanout across two instances', error: `no Redis answers at ${redisUrl}` });
      }
    }
    for (const run of runs) {
      const name = `fan-out to ${run.clients.toLocaleString('en')} subscribers on ${run.instances} instance(s), ${DATABASE_NAMES[run.database]}`;
      await attempt(name, async () => {
        report.fanout.push({ ...run, report: await measureFanout(run, runDir, postgresUrl, redisUrl) });
      });
    }
  }
  if (cases.includes('propagation') && databases.includes('postgres')) {
    await attempt('rollback propagation between two instances (PostgreSQL + Redis)', async () => {
      if (!(await redisAnswers(redisUrl))) throw new Error(`no Redis answers at ${redisUrl}`);
      report.propagation = await measurePropagation(runDir, postgresUrl, redisUrl, quick ? 5 : 20);
    });
  }
  if (cases.includes('webhooks')) {
    await attempt('webhook delivery latency (PGlite, in process)', async () => {
      report.webhooks = await measureWebhookLatency(quick ? 100 : 500);
    });
    await attempt(
      'webhook delivery latency beside a slow tenant’s backlog (PGlite, in process)',
      async () => {
        report.webhookFairness = await measureWebhookFairness(quick ? 20 : 50);
      },
    );
  }
  if (cases.includes('mcp')) {
    await attempt('MCP tool calls against the same GraphQL mutations (PGlite, in process)', async () => {
      report.mcp = await measureMcpCalls(quick ? 3 : 5, quick ? 40 : 100);
    });
  }
  if (cases.includes('tool-list')) {
    await attempt('MCP tools/list tokens for 1, 10 and 100 connectors (PGlite, in process)', async () => {
      report.toolList = await measureToolList([1, 10, 100], 20);
    });
  }
  if (cases.includes('a2a')) {
    await attempt(
      'A2A SendMessage against the REST chat, and its replay (gateway process, PGlite)',
      async () => {
        report.a2a = await measureA2a({ runDir, postgresUrl }, quick ? 3 : 5, quick ? 40 : 100);
      },
    );
  }
  if (cases.includes('delegation')) {
    await attempt(
      'a delegated tree of 50 tasks against 50 independent chats (PGlite, in process)',
      async () => {
        report.delegation = await measureDelegation(quick ? 3 : 5);
      },
    );
  }
  if (cases.includes('task-runs')) {
    for (const database of databases) {
      const withRedis = database === 'postgres' && (await redisAnswers(redisUrl));
      const where = database === 'pglite' ? 'PGlite' : withRedis ? 'PostgreSQL + Redis' : 'PostgreSQL';
      await attempt(
        `run records: 100 steps per task, and a 1,000-step timeline read (gateway process, ${where})`,
        async () => {
          report.taskRuns.push(
            await measureTaskRuns(database, {
              runDir,
              postgresUrl,
              redisUrl: withRedis ? redisUrl : undefined,
              rounds: quick ? 3 : 5,
              tasksPerRound: quick ? 20 : 60,
              timelineReads: quick ? 100 : 300,
            }),
          );
        },
      );
    }
  }
  if (cases.includes('agent-runtime')) {
    await attempt('the reference agent runtime per task against its model server (PGlite)', async () => {
      report.agentRuntime = await measureAgentRuntime(quick ? 60 : 300);
    });
  }
  if (cases.includes('agent-telemetry')) {
    await attempt(
      'the reference agent runtime with and without OTel export (PGlite, in process)',
      async () => {
        report.agentTelemetry = await measureAgentTelemetry(quick ? 3 : 5, quick ? 60 : 150);
      },
    );
  }
  if (cases.includes('claim-wait')) {
    for (const database of databases) {
      const acrossInstances = database === 'postgres' && (await redisAnswers(redisUrl));
      const where = acrossInstances ? 'two instances, PostgreSQL + Redis' : DATABASE_NAMES[database];
      await attempt(`waiting claim woken by a chat (${where})`, async () => {
        report.claimWait.push(
          await measureClaimWake(
            database,
            runDir,
            postgresUrl,
            acrossInstances ? redisUrl : undefined,
            quick ? 50 : 300,
            quick ? 100 : 1000,
          ),
        );
      });
    }
  }
  if (cases.includes('idle-waiters')) {
    for (const database of databases) {
      await attempt(`idle CPU with 1,000 waiting claims (${DATABASE_NAMES[database]})`, async () => {
        report.idleWaiters.push(
          await measureIdleWaiters(database, runDir, postgresUrl, 1000, quick ? 3 : 10),
        );
      });
    }
  }
  if (cases.includes('routines')) {
    await attempt('routine ticks, 10,000 routines across 100 tenants (PGlite, in process)', async () => {
      report.routines = await measureRoutineTicks(10_000, 100, quick ? 50 : 200, quick ? 2 : 5);
    });
  }
  if (cases.includes('queue')) {
    await attempt('queue drain against chat fill (16 producers, 32 runtimes)', async () => {
      const gateways: Gateway[] = [];
      let reference: QueueReference | undefined;
      try {
        for (const database of databases) {
          gateways.push(await startGateway({ name: `queue-${database}`, database, runDir, postgresUrl }));
        }
        // On PostgreSQL, pg-boss on the same server in the same rounds: the reference for claims per second.
        if (databases.includes('postgres')) reference = await startQueueReference(postgresUrl);
        const gatewayRounds: QueueRound[] = [];
        const referenceRounds: QueueReferenceRound[] = [];
        const targets: ((round: number, seconds: number) => Promise<void>)[] = gateways.map(
          (gateway) => async (round, seconds) => {
            const result = await queueRound(gateway, round, seconds);
            if (round > 0) gatewayRounds.push(result);
          },
        );
        if (reference) {
          const { round: referenceRound } = reference;
          targets.push(async (round, seconds) => {
            const result = await referenceRound(round, seconds);
            if (round > 0) referenceRounds.push(result);
          });
        }
        // One warm-up round each, then interleaved rounds, the order alternating.
        for (const target of targets) await target(0, 1);
        for (let round = 1; round <= plan.rounds; round += 1) {
          const order = round % 2 === 1 ? targets : [...targets].reverse();
          for (const target of order) await target(round, plan.seconds);
        }
        report.queue = gatewayRounds;
        if (reference) {
          // Per round, the gateway's drain on PostgreSQL against the reference's fetch + complete.
          const drainToReference = referenceRounds.map(
            (reference) =>
              (gatewayRounds.find((round) => round.database === 'postgres' && round.round === reference.round)
                ?.drainPerSecond ?? Number.NaN) / reference.drainPerSecond,
          );
          report.queueReference = {
            name: reference.name,
            rounds: referenceRounds,
            drainToReference,
            medianDrainToReference: median(drainToReference),
          };
        }
      } finally {
        await reference?.stop();
        for (const gateway of gateways) await gateway.stop();
      }
    });
  }
  if (cases.includes('startup')) {
    await attempt('start-up and idle memory', async () => {
      report.startup = await measureStartup(databases, quick ? 1 : 3, runDir, postgresUrl);
    });
  }
  if (interrupted()) {
    await cleanUp();
    process.exit(130);
  }
  report.machine.loadAverageAtEnd = os.loadavg();
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  printReport(report, plan);
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
} finally {
  await cleanUp();
}
process.exit(report.errors.length > 0 ? 1 : 0);
