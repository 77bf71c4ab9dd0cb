// What the reference runtime's OpenTelemetry export adds to its time per task: the runtime as a user starts
// it (`node dist/agent.js`) works the same number of queued chats with telemetry off and with GenAI spans and
// metrics exported to a collector on loopback, in interleaved rounds whose order alternates, on one PGlite
// gateway in this process, against a Chat Completions server on loopback that answers after a fixed delay.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { startServer } from '../src/server.js';
import { BENCH_SECRET, withInProcessApp } from './in-process.js';
import { median } from './measure.js';
import { root } from './processes.js';

export interface AgentTelemetryFigures {
  rounds: number;
  tasksPerRound: number;
  modelDelayMs: number;
  /** Median over rounds of the median time per task (one whole cycle), without and with export. */
  offMs: number;
  onMs: number;
  /** Median over rounds of on / off, per round: what export adds to the time per task. */
  timeRatio: number;
  /** The runtime process's CPU (user + system) per task, median over rounds, without and with export. */
  offCpuMs: number;
  onCpuMs: number;
  /** Each round's figures, in order: time and CPU per task without and with export. */
  perRound: { off: { ms: number; cpuMs: number }; on: { ms: number; cpuMs: number } }[];
  /** OTLP requests the collector received over the rounds with export (0 would mean nothing was measured). */
  exports: number;
}

const TENANT = '7d2e4b8f-5a3c-4e1a-9b0d-4c3e2f1a0b9c';
const TICKS_PER_SECOND = 100;

const listening = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const closing = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** User + system CPU of a process so far, in ms (Linux /proc). */
async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

export async function measureAgentTelemetry(
  rounds: number,
  tasksPerRound: number,
  modelDelayMs = 20,
): Promise<AgentTelemetryFigures> {
  let arrivals: number[] = [];
  // The first tasks of each process (its first export included) warm it up; the rest are measured.
  const warmTasks = Math.floor(tasksPerRound * 0.4);
  let cpuAtFirst = 0;
  let cpuAtLast = 0;
  let runtime: ChildProcess | undefined;
  let roundDone: (() => void) | undefined;
  const model = createServer((request, response) => {
    request.resume();
    request.on('end', async () => {
      arrivals.push(performance.now());
      const pid = runtime?.pid;
      if (pid && arrivals.length === warmTasks + 1) cpuAtFirst = await cpuMsOf(pid);
      if (pid && arrivals.length === tasksPerRound) cpuAtLast = await cpuMsOf(pid);
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${arrivals.length}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: 'bench-model',
            choices: [
              { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Closed.' } },
            ],
            usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
          }),
        );
        if (arrivals.length >= tasksPerRound) roundDone?.();
      }, modelDelayMs);
    });
  });
  let exports = 0;
  const collector = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const modelPort = await listening(model);
  const collectorPort = await listening(collector);
  try {
    return await withInProcessApp('agent-telemetry', {}, async (app) => {
      const server = await startServer(app, 0, '127.0.0.1');
      try {
        const chairman = await signToken(BENCH_SECRET, {
          tenantId: TENANT,
          sub: 'bench-chairman',
          roles: ['chairman'],
        });
        const agent = await signToken(BENCH_SECRET, {
          tenantId: TENANT,
          sub: 'bench-runtime',
          roles: ['agent'],
        });
        const round = async (exporting: boolean) => {
          for (let index = 0; index < tasksPerRound; index += 1) {
            const response = await app.yoga.fetch('http://bench/graphql', {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${chairman}` },
              body: JSON.stringify({
                query:
                  'mutation { sendChatMessage(role: "cfo", input: { message: "Close the books" }) { taskId } }',
              }),
            });
            const result = (await response.json()) as { errors?: unknown };
            if (result.errors) throw new Error(JSON.stringify(result.errors));
          }
          arrivals = [];
          const done = new Promise<void>((resolve) => {
            roundDone = resolve;
          });
          const { OTEL_EXPORTER_OTLP_ENDPOINT: _inherited, ...env } = process.env;
          const child = spawn(process.execPath, [path.join(root, 'dist/agent.js'), '--role', 'cfo'], {
            env: {
              ...env,
              BOARDROOM_URL: server.url,
              BOARDROOM_TOKEN: agent,
              OPENAI_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
              AGENT_MODEL: 'bench-model',
              AGENT_PRICES: JSON.stringify({ 'bench-model': { input: 1, output: 4 } }),
              ...(exporting
                ? {
                    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
                    OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental',
                  }
                : {}),
            },
            stdio: ['ignore', 'ignore', 'ignore'],
          });
          runtime = child;
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          try {
            await Promise.race([
              done,
              exited.then(() => {
                throw new Error('the runtime exited before its work was done');
              }),
            ]);
          } finally {
            child.kill('SIGTERM');
            await exited;
          }
          const steady = arrivals
            .slice(warmTasks + 1)
            .map((at, index) => at - (arrivals[warmTasks + index] as number));
          return { ms: median(steady), cpuMs: (cpuAtLast - cpuAtFirst) / (tasksPerRound - warmTasks - 1) };
        };
        // One round of each to warm the gateway up, not counted.
        await round(false);
        await round(true);
        exports = 0;
        const off: { ms: number; cpuMs: number }[] = [];
        const on: { ms: number; cpuMs: number }[] = [];
        for (let index = 0; index < rounds; index += 1) {
          const order = index % 2 === 0 ? [false, true] : [true, false];
          for (const exporting of order) (exporting ? on : off).push(await round(exporting));
        }
        if (exports === 0) throw new Error('the collector received nothing: the export was not measured');
        return {
          rounds,
          tasksPerRound,
          modelDelayMs,
          offMs: median(off.map((figures) => figures.ms)),
          onMs: median(on.map((figures) => figures.ms)),
          timeRatio: median(on.map((figures, index) => figures.ms / (off[index] as { ms: number }).ms)),
          offCpuMs: median(off.map((figures) => figures.cpuMs)),
          onCpuMs: median(on.map((figures) => figures.cpuMs)),
          exports,
          perRound: off.map((figures, index) => ({ off: figures, on: on[index] as typeof figures })),
        };
      } finally {
        // The listener only: withInProcessApp closes the app.
        await closing(server.server);
      }
    });
  } finally {
    await closing(model);
    await closing(collector);
  }
}
