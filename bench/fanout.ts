// Subscription fan-out: opens graphql-ws clients subscribed to `agentPaused`, pauses and resumes the CEO
// agent over HTTP, and times each pause from the request to every client's receipt. Run it in a process of
// its own against servers started as users start them (`node dist/main.js`, see bench/README.md, "Subscription fan-out by hand"):
//
//   npx tsx bench/fanout.ts --url http://127.0.0.1:4000 --token <chairman JWT> --clients 10000 --events 5 \
//     [--urls http://127.0.0.1:4000,http://127.0.0.1:4001]   spread the clients over instances (round robin)
//     [--pids 123,456]   sample each server's RSS from /proc after every event
//     [--timeout-ms 30000]   how long an event may take to reach every client before the rest count as missed
//     [--per-process 8000]   clients per client process (each needs a file descriptor per client)
//
// The token needs the chairman role (pause, resume, dogfood live mode); every client uses it, so the
// servers need WS_MAX_SOCKETS_PER_CALLER and RATE_LIMIT_PER_MINUTE above the client count. The clients
// live in child processes of this one (`--per-process` each, under `ulimit -n`); receipt times are taken
// there on the shared wall clock (performance.timeOrigin + now). Pauses go to the first URL. Progress goes
// to stderr; stdout gets one JSON line at the end:
//   {clients, instances, events, missed, deliveryMs: {p50, p99, max}, perEvent: [{p99Ms, maxMs, missed,
//    rssMb: {<pid>: MB}}], rssMbBefore: {<pid>: MB}}
// deliveryMs is over all receipts of the measured events; rssMbBefore is sampled once every client is
// subscribed and has received a warm-up pause, before the first measured one.
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const { values: flags } = parseArgs({
  options: {
    url: { type: 'string' },
    urls: { type: 'string' },
    token: { type: 'string' },
    clients: { type: 'string', default: '1000' },
    events: { type: 'string', default: '5' },
    pids: { type: 'string', default: '' },
    'timeout-ms': { type: 'string', default: '30000' },
    'per-process': { type: 'string', default: '8000' },
    role: { type: 'string', default: 'ceo' },
    // Set by the coordinator on its client processes: the first client index and how many to open.
    shard: { type: 'string' },
  },
});

const urls = (flags.urls ?? flags.url ?? '').split(',').filter(Boolean);
const token = flags.token;
if (urls.length === 0 || !token) {
  console.error(
    'usage: bench/fanout.ts --url <http url> | --urls <a,b> --token <JWT> [--clients N] [--events N]',
  );
  process.exit(2);
}
const role = flags.role;
const log = (message: string) => process.stderr.write(`fanout: ${message}\n`);
/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();

/** Messages from a client process to the coordinator. */
type FromShard =
  | { type: 'connected'; connected: number }
  | { type: 'complete'; eventId: string }
  | { type: 'times'; eventId: string; times: number[] };
/** Messages from the coordinator to a client process. */
type ToShard = { type: 'times'; eventId: string } | { type: 'exit' };

/** A client process: opens its clients, tells when an event reached all of them, reports receipt times. */
async function runShard(first: number, count: number): Promise<void> {
  const send = (message: FromShard) => process.send?.(message);
  const receipts = new Map<string, number[]>();
  const clients = [];
  let failures = 0;

  const open = (index: number) =>
    new Promise<void>((resolve) => {
      let settled = false;
      const seen = new Set<string>();
      const settle = () => {
        if (!settled) resolve();
        settled = true;
      };
      const base = urls[index % urls.length] as string;
      const client = createClient({
        url: `${base.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${token}` },
        lazy: false,
        retryAttempts: 0,
        on: {
          connected: settle,
          closed: (event) => {
            if (!settled && ++failures <= 5)
              log(`client ${index} closed before connecting: ${JSON.stringify(event)}`);
            settle();
          },
        },
      });
      clients.push(client);
      client.subscribe<{ agentPaused: { eventId: string } }>(
        {
          query: 'subscription ($role: String) { agentPaused(role: $role) { eventId } }',
          variables: { role },
        },
        {
          next: (result) => {
            const at = now();
            if (result.errors && ++failures <= 5) log(`client ${index}: ${JSON.stringify(result.errors)}`);
            const eventId = result.data?.agentPaused.eventId;
            if (!eventId || seen.has(eventId)) return;
            seen.add(eventId);
            const times = receipts.get(eventId) ?? [];
            receipts.set(eventId, times);
            times.push(at);
            if (times.length === count) send({ type: 'complete', eventId });
          },
          error: (error) => {
            if (++failures <= 5) log(`client ${index} subscription error: ${JSON.stringify(error)}`);
          },
          complete: () => {},
        },
      );
    });

  process.on('message', (message: ToShard) => {
    if (message.type === 'exit') process.exit(0);
    send({ type: 'times', eventId: message.eventId, times: receipts.get(message.eventId) ?? [] });
  });
  // A few hundred handshakes at a time: the server verifies each token and subscribes each client.
  for (let index = first; index < first + count; index += 250) {
    await Promise.all(
      Array.from({ length: Math.min(250, first + count - index) }, (_, offset) => open(index + offset)),
    );
  }
  send({ type: 'connected', connected: count - failures });
}

/** The coordinator: starts the client processes, pauses and resumes, gathers the figures. */
async function coordinate(): Promise<void> {
  const clientCount = Number(flags.clients);
  const eventCount = Number(flags.events);
  const timeoutMs = Number(flags['timeout-ms']);
  const perProcess = Number(flags['per-process']);
  const pids = flags.pids.split(',').filter(Boolean);

  const rssMb = (): Record<string, number> => {
    const sample: Record<string, number> = {};
    for (const pid of pids) {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      sample[pid] = Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024);
    }
    return sample;
  };

  const graphql = async (query: string): Promise<Record<string, unknown>> => {
    const response = await fetch(`${urls[0]}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables: { role } }),
    });
    const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
    if (!response.ok || body.errors)
      throw new Error(`${response.status} ${JSON.stringify(body.errors ?? body)}`);
    return body.data ?? {};
  };
  const PAUSE =
    'mutation ($role: String!) { pauseAgent(role: $role, input: {actorUserId: "fanout-bench"}) { eventId } }';
  const RESUME =
    'mutation ($role: String!) { resumeAgent(role: $role, input: {actorUserId: "fanout-bench"}) { paused } }';

  await graphql('mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }');
  // A pause left over from an interrupted run would make the first pause a repeat that publishes nothing.
  await graphql(RESUME).catch(() => {});

  const shards: ChildProcess[] = [];
  const completions = new Map<string, number>();
  let onComplete: (() => void) | undefined;
  const pendingTimes = new Map<ChildProcess, (times: number[]) => void>();
  const opening = performance.now();
  const connected = await Promise.all(
    Array.from({ length: Math.ceil(clientCount / perProcess) }, (_, shard) => {
      const first = shard * perProcess;
      const count = Math.min(perProcess, clientCount - first);
      const args = [...process.argv.slice(2), '--shard', `${first}:${count}`];
      const child = fork(fileURLToPath(import.meta.url), args, {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      shards.push(child);
      return new Promise<number>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`client process exited with ${code}`)));
        child.on('message', (message: FromShard) => {
          if (message.type === 'connected') resolve(message.connected);
          else if (message.type === 'complete') {
            completions.set(message.eventId, (completions.get(message.eventId) ?? 0) + 1);
            onComplete?.();
          } else pendingTimes.get(child)?.(message.times);
        });
      });
    }),
  );
  const connectedCount = connected.reduce((sum, count) => sum + count, 0);
  log(
    `${connectedCount} of ${clientCount} clients connected in ${Math.round(performance.now() - opening)} ms`,
  );

  const timesOf = (eventId: string) =>
    Promise.all(
      shards.map(
        (child) =>
          new Promise<number[]>((resolve) => {
            pendingTimes.set(child, resolve);
            child.send({ type: 'times', eventId } satisfies ToShard);
          }),
      ),
    ).then((lists) => lists.flat());

  /** Pauses, waits until every client process has every receipt (or the timeout), resumes. */
  const pauseOnce = async (waitMs: number) => {
    let eventId: string | undefined;
    const started = now();
    const everywhere = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        onComplete = undefined;
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      onComplete = () => {
        if (eventId && (completions.get(eventId) ?? 0) >= shards.length) done();
      };
    });
    eventId = ((await graphql(PAUSE)).pauseAgent as { eventId: string }).eventId;
    onComplete?.();
    await everywhere;
    await graphql(RESUME);
    return { started, times: (await timesOf(eventId)).map((at) => at - started) };
  };

  const percentile = (sorted: number[], p: number) => {
    if (sorted.length === 0) return Number.NaN;
    const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
    return Math.round((sorted[index] as number) * 10) / 10;
  };

  // graphql-ws does not acknowledge a subscription: warm-up pauses until every client has received one.
  for (let warmup = 1; warmup <= 10; warmup++) {
    const { times } = await pauseOnce(10_000);
    log(`warm-up pause ${warmup} reached ${times.length} clients`);
    if (times.length >= clientCount) break;
  }

  const rssMbBefore = rssMb();
  const perEvent: { p99Ms: number; maxMs: number; missed: number; rssMb: Record<string, number> }[] = [];
  const all: number[] = [];
  let missed = 0;
  for (let event = 0; event < eventCount; event++) {
    const { times } = await pauseOnce(timeoutMs);
    times.sort((a, b) => a - b);
    all.push(...times);
    missed += clientCount - times.length;
    const sample = {
      p99Ms: percentile(times, 99),
      maxMs: percentile(times, 100),
      missed: clientCount - times.length,
      rssMb: rssMb(),
    };
    perEvent.push(sample);
    log(`event ${event + 1}: ${JSON.stringify(sample)}`);
  }
  all.sort((a, b) => a - b);
  for (const child of shards) {
    child.removeAllListeners('exit');
    child.send({ type: 'exit' } satisfies ToShard);
  }
  process.stdout.write(
    `${JSON.stringify({
      clients: clientCount,
      instances: urls.length,
      events: eventCount,
      missed,
      deliveryMs: { p50: percentile(all, 50), p99: percentile(all, 99), max: percentile(all, 100) },
      perEvent,
      rssMbBefore,
    })}\n`,
  );
}

if (flags.shard) {
  const [first, count] = flags.shard.split(':').map(Number);
  await runShard(first ?? 0, count ?? 0);
} else {
  await coordinate();
}
