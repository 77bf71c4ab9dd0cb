// Measuring one case: every target (a baseline, the gateway on each database) is warmed up, then measured
// in interleaved rounds whose order rotates, so that noise from the rest of the machine and any drift
// over time fall on all of them alike. Ratios are taken within a round and their median reported.
import { type ChildProcess, execFile, fork } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { LoadJob, LoadResult } from './load.js';
import { cpuSeconds, onCleanup } from './processes.js';

export type Loader = 'autocannon' | 'wrk';

/** The forked load generator; jobs run one at a time. */
export class LoadClient {
  private child: ChildProcess;
  private next = 0;
  private pending = new Map<number, { resolve(r: LoadResult): void; reject(e: Error): void }>();

  constructor() {
    this.child = fork(new URL('./load.ts', import.meta.url), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (message: { id: number; result?: LoadResult; error?: string }) => {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.result) waiter?.resolve(message.result);
      else waiter?.reject(new Error(message.error));
    });
    this.child.once('exit', (code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
    onCleanup(() => this.close());
  }

  run(job: LoadJob): Promise<LoadResult> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, job });
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}

const toMs = (value: string, unit: string) =>
  Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 1);

/** The same job through wrk (one thread), for cross-checking the load generator. */
export async function runWrk(job: LoadJob, scriptDir: string): Promise<LoadResult> {
  if (job.rotateAuthorization || job.abEvents || job.amount) throw new Error('wrk runs fixed requests only');
  const script = path.join(scriptDir, `wrk-${process.hrtime.bigint()}.lua`);
  const headers = Object.entries(job.headers)
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  await writeFile(
    script,
    `wrk.method = ${JSON.stringify(job.method)}\n${headers}\n${job.body ? `wrk.body = ${JSON.stringify(job.body)}\n` : ''}`,
  );
  const seconds = job.seconds ?? 3;
  const { stdout } = await promisify(execFile)('wrk', [
    '-t1',
    `-c${job.connections}`,
    `-d${seconds}s`,
    '--latency',
    '-s',
    script,
    job.url,
  ]);
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? 0);
  const latency = (percent: string) => {
    const match = new RegExp(`^\\s*${percent}%\\s+([\\d.]+)(us|ms|s|m)`, 'm').exec(stdout);
    return match?.[1] && match[2] ? toMs(match[1], match[2]) : Number.NaN;
  };
  const requests = number(/(\d+) requests in/);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const max = /Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/.exec(stdout);
  return {
    requests,
    seconds,
    perSecond: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    maxMs: max?.[1] && max[2] ? toMs(max[1], max[2]) : Number.NaN,
    failures:
      number(/Non-2xx or 3xx responses: (\d+)/) +
      (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
    statusCodes: {},
  };
}

export interface Target {
  name: string;
  /** The server process whose CPU is charged to the requests. */
  pid: number;
  job: LoadJob;
  /** The load generator of this target; default: the plan's. */
  loader?: Loader;
  /** Other processes serving it (PostgreSQL backends), resolved before each sample. */
  helpers?: () => Promise<number[]>;
}

export interface Sample extends LoadResult {
  cpuMsPerRequest: number;
  /** CPU of the helper processes (the database server's backends) per request. */
  helperCpuMsPerRequest?: number;
}

export interface Plan {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  loader: Loader;
}

async function sumCpu(pids: number[]): Promise<Map<number, number>> {
  return new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuSeconds(pid)] as const)));
}

async function sample(target: Target, seconds: number, client: LoadClient, plan: Plan, scratch: string) {
  const job = { ...target.job, seconds };
  const helpers = target.helpers ? await target.helpers() : [];
  const helpersBefore = await sumCpu(helpers);
  const before = await cpuSeconds(target.pid);
  const result =
    (target.loader ?? plan.loader) === 'wrk' ? await runWrk(job, scratch) : await client.run(job);
  const after = await cpuSeconds(target.pid);
  const helpersAfter = await sumCpu(helpers);
  let helperCpu = 0;
  for (const [pid, cpu] of helpersBefore) helperCpu += (helpersAfter.get(pid) ?? cpu) - cpu;
  const perRequest = (cpu: number) => (result.requests > 0 ? (cpu * 1000) / result.requests : Number.NaN);
  return {
    ...result,
    cpuMsPerRequest: perRequest(after - before),
    ...(target.helpers ? { helperCpuMsPerRequest: perRequest(helperCpu) } : {}),
  } satisfies Sample;
}

/** Samples of each target by name, one per round. */
export async function interleave(
  targets: Target[],
  plan: Plan,
  client: LoadClient,
  scratch: string,
): Promise<Record<string, Sample[]>> {
  for (const target of targets) await sample(target, plan.warmupSeconds, client, plan, scratch);
  const samples: Record<string, Sample[]> = Object.fromEntries(targets.map((target) => [target.name, []]));
  for (let round = 0; round < plan.rounds; round++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(round + k) % targets.length];
      if (target) samples[target.name]?.push(await sample(target, plan.seconds, client, plan, scratch));
    }
  }
  return samples;
}

/** The nearest-rank percentile `p` (0 to 100) of `values`; NaN for none. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Median over rounds of `of[r] / to[r]`. */
export function medianRatio(of: LoadResult[], to: LoadResult[]): number {
  return median(of.map((result, round) => result.perSecond / (to[round]?.perSecond ?? Number.NaN)));
}

/** Median over rounds of `to[r]`'s CPU per request / `of[r]`'s: the throughput ratio if both were CPU-bound. */
export function medianCpuRatio(of: Sample[], to: Sample[]): number {
  return median(
    of.map((sample, round) => (to[round]?.cpuMsPerRequest ?? Number.NaN) / sample.cpuMsPerRequest),
  );
}

export interface Summary {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  helperCpuMsPerRequest?: number;
  failures: number;
  statusCodes: Record<string, number>;
  rounds: number[];
}

export function summarize(samples: Sample[]): Summary {
  const statusCodes: Record<string, number> = {};
  for (const s of samples) {
    for (const [code, count] of Object.entries(s.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  const helper = samples.map((s) => s.helperCpuMsPerRequest).filter((v) => v !== undefined);
  return {
    perSecond: median(samples.map((s) => s.perSecond)),
    p50Ms: median(samples.map((s) => s.p50Ms)),
    p99Ms: median(samples.map((s) => s.p99Ms)),
    cpuMsPerRequest: median(samples.map((s) => s.cpuMsPerRequest)),
    ...(helper.length > 0 ? { helperCpuMsPerRequest: median(helper) } : {}),
    failures: samples.reduce((sum, s) => sum + s.failures, 0),
    statusCodes,
    rounds: samples.map((s) => Math.round(s.perSecond)),
  };
}
