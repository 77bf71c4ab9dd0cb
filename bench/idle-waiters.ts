// What waiting agents cost at idle: the built server's CPU (user + system of its process, every thread; on
// PostgreSQL the database backends' beside it) over a quiet window with no agents, over the same window
// with `agents` claims waiting in claimNextTask(waitSeconds: 30) for a role with nothing queued, and over
// another quiet window once they are gone. The claims are sent all at once, each re-sent when it answers
// (as a runtime loops on it), and the waiting window starts once they are established: at least 2 s after
// the last was sent, and once a 1-second slice of the gateway's CPU is back under 50 ms (at most 15 s), so
// the window (10 s; --quick 3 s) ends before their 30 s do.
import { performance } from 'node:perf_hooks';
import { backendPids, cpuSeconds } from './processes.js';
import { type DatabaseKind, type Gateway, graphqlRequest, mintCaller, startGateway } from './servers.js';

export interface CpuWindow {
  seconds: number;
  /** The gateway process's CPU, milliseconds per second of the window. */
  gatewayMsPerS: number;
  /** PostgreSQL's backends serving the gateway's database; undefined on PGlite. */
  backendsMsPerS?: number;
}

export interface IdleWaitersFigures {
  database: DatabaseKind;
  agents: number;
  quietBefore: CpuWindow;
  waiting: CpuWindow;
  quietAfter: CpuWindow;
  /** The waiting window less the mean of the two quiet ones, milliseconds of CPU per second. */
  addedGatewayMsPerS: number;
  addedBackendsMsPerS?: number;
  /** From the last claim sent to the start of the waiting window. */
  settleSeconds: number;
  /** Gateway CPU from the first claim sent to the start of the waiting window, per claim. */
  establishCpuMsPerClaim: number;
  /** Claims answered during the waiting window (each re-sent at once); 0 when the window fits the waits. */
  answeredDuringWindow: number;
  /** Claims that answered anything but a wait that ended with `queue_empty` (a 503, an error). */
  failures: number;
}

const WAIT = 'mutation { claimNextTask(role: "cfo", waitSeconds: 30) { outcome } }';
const SETTLE_MIN_MS = 2000;
const SETTLE_MAX_MS = 15_000;
/** A 1-second slice of the gateway's CPU under this many milliseconds: the claims are established. */
const SETTLED_CPU_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds of each process by pid. */
async function cpuOf(pids: number[]): Promise<Map<number, number>> {
  return new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuSeconds(pid)] as const)));
}

async function window(gateway: Gateway, backends: () => Promise<number[]>, seconds: number) {
  const pids = await backends();
  const started = performance.now();
  const gatewayBefore = await cpuSeconds(gateway.pid);
  const backendsBefore = await cpuOf(pids);
  await sleep(seconds * 1000);
  const gatewayAfter = await cpuSeconds(gateway.pid);
  const backendsAfter = await cpuOf(pids);
  const elapsed = (performance.now() - started) / 1000;
  const figures: CpuWindow = {
    seconds: elapsed,
    gatewayMsPerS: ((gatewayAfter - gatewayBefore) * 1000) / elapsed,
  };
  if (gateway.databaseName) {
    // A backend that ended during the window is left out.
    let used = 0;
    for (const [pid, before] of backendsBefore) {
      const after = backendsAfter.get(pid);
      used += after === undefined || Number.isNaN(after) ? 0 : after - before;
    }
    figures.backendsMsPerS = (used * 1000) / elapsed;
  }
  return figures;
}

/** Waits (at least `minMs`, at most SETTLE_MAX_MS) until a 1-second slice of the gateway's CPU is quiet. */
async function settle(gateway: Gateway, minMs: number): Promise<void> {
  const started = performance.now();
  await sleep(minMs);
  while (performance.now() - started < SETTLE_MAX_MS) {
    const before = await cpuSeconds(gateway.pid);
    await sleep(1000);
    if ((await cpuSeconds(gateway.pid)) - before < SETTLED_CPU_MS / 1000) return;
  }
}

export async function measureIdleWaiters(
  database: DatabaseKind,
  runDir: string,
  postgresUrl: string,
  agents: number,
  windowSeconds: number,
): Promise<IdleWaitersFigures> {
  const gateway = await startGateway({ name: `idle-waiters-${database}`, database, runDir, postgresUrl });
  const name = gateway.databaseName;
  const backends = name ? () => backendPids(postgresUrl, name) : async () => [];
  const controller = new AbortController();
  let running = true;
  let answered = 0;
  let failures = 0;
  const loops: Promise<void>[] = [];
  try {
    const caller = await mintCaller(['member', 'agent']);
    // The tenant and the role exist, and the gateway has answered a claim once.
    await graphqlRequest(gateway, caller, 'mutation { claimNextTask(role: "cfo") { outcome } }');
    await settle(gateway, SETTLE_MIN_MS);
    const quietBefore = await window(gateway, backends, windowSeconds);

    const establishStart = await cpuSeconds(gateway.pid);
    for (let index = 0; index < agents; index += 1) {
      loops.push(
        (async () => {
          while (running) {
            const response = await fetch(`${gateway.url}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
              body: JSON.stringify({ query: WAIT }),
              signal: controller.signal,
            });
            const body = (await response.json()) as { data?: { claimNextTask?: { outcome?: string } } };
            answered += 1;
            if (!response.ok || body.data?.claimNextTask?.outcome !== 'queue_empty') {
              failures += 1;
              await sleep(100 + Math.random() * 100);
            }
          }
        })().catch(() => {
          // Aborting ends the claims; anything else before that is a failure.
          if (running) failures += 1;
        }),
      );
    }
    const sent = performance.now();
    await settle(gateway, SETTLE_MIN_MS);
    const settleSeconds = (performance.now() - sent) / 1000;
    const establishCpuMsPerClaim = (((await cpuSeconds(gateway.pid)) - establishStart) * 1000) / agents;
    const answeredBefore = answered;
    const waiting = await window(gateway, backends, windowSeconds);
    const answeredDuringWindow = answered - answeredBefore;

    running = false;
    controller.abort();
    await Promise.allSettled(loops);
    await settle(gateway, SETTLE_MIN_MS);
    const quietAfter = await window(gateway, backends, windowSeconds);

    const quietGateway = (quietBefore.gatewayMsPerS + quietAfter.gatewayMsPerS) / 2;
    const figures: IdleWaitersFigures = {
      database,
      agents,
      quietBefore,
      waiting,
      quietAfter,
      addedGatewayMsPerS: waiting.gatewayMsPerS - quietGateway,
      settleSeconds,
      establishCpuMsPerClaim,
      answeredDuringWindow,
      failures,
    };
    if (waiting.backendsMsPerS !== undefined) {
      const quietBackends = ((quietBefore.backendsMsPerS ?? 0) + (quietAfter.backendsMsPerS ?? 0)) / 2;
      figures.addedBackendsMsPerS = waiting.backendsMsPerS - quietBackends;
    }
    return figures;
  } finally {
    running = false;
    controller.abort();
    await Promise.allSettled(loops);
    await gateway.stop();
  }
}
