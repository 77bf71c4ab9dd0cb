// The reference agent runtime's own cost per task against the model server's time: one runtime process
// (`node dist/agent.js`, as a user starts it) works a queue of chats on a gateway served over loopback HTTP
// (PGlite, in this process), calling a Chat Completions server on loopback that answers every request after
// a fixed delay. The time between two consecutive model requests is one whole task cycle (complete the last
// task, claim the next, the model call); what exceeds the model's delay is the runtime's overhead with
// Boardroom's answers to it.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createApp } from '../src/app.js';
import { signToken } from '../src/auth/tokens.js';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { median, percentile } from './measure.js';
import { root } from './processes.js';

export interface AgentRuntimeFigures {
  tasks: number;
  /** What the model server takes to answer each request (a fixed delay). */
  modelDelayMs: number;
  /** Median time between two consecutive model requests: one task's whole cycle. */
  cycleMedianMs: number;
  /** cycleMedianMs − modelDelayMs: the runtime and Boardroom per task. */
  overheadMedianMs: number;
  overheadP90Ms: number;
  /** overhead / model time. */
  overheadRatio: number;
}

const SECRET = 'bench-secret-that-is-long-enough-for-hs256-signing';
const TENANT = '6c1f3a7d-4e2b-4d9f-8a0c-3b2d1e0f9a8b';

export async function measureAgentRuntime(tasks: number, modelDelayMs = 50): Promise<AgentRuntimeFigures> {
  const arrivals: number[] = [];
  let allArrived: (() => void) | undefined;
  const done = new Promise<void>((resolve) => {
    allArrived = resolve;
  });
  const model = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrivals.push(performance.now());
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${arrivals.length}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: 'bench-model',
            choices: [
              {
                index: 0,
                finish_reason: 'stop',
                message: { role: 'assistant', content: 'The books are closed.' },
              },
            ],
            usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
          }),
        );
        if (arrivals.length >= tasks) allArrived?.();
      }, modelDelayMs);
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const modelPort = (model.address() as AddressInfo).port;

  const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-bench-agent-'));
  const config = loadConfig({
    AUTH_JWT_SECRET: SECRET,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const app = await createApp(config, { logger: pino({ level: 'silent' }) });
  await app.start();
  const server = await startServer(app, 0, '127.0.0.1');
  const runtime = { kill: () => {} } as { kill: (signal?: NodeJS.Signals) => void };
  try {
    const chairman = await signToken(SECRET, {
      tenantId: TENANT,
      sub: 'bench-chairman',
      roles: ['chairman'],
    });
    const agent = await signToken(SECRET, { tenantId: TENANT, sub: 'bench-runtime', roles: ['agent'] });
    for (let index = 0; index < tasks; index += 1) {
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
    const child = spawn(process.execPath, [path.join(root, 'dist/agent.js'), '--role', 'cfo'], {
      env: {
        ...process.env,
        BOARDROOM_URL: server.url,
        BOARDROOM_TOKEN: agent,
        OPENAI_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
        AGENT_MODEL: 'bench-model',
        AGENT_PRICES: JSON.stringify({ 'bench-model': { input: 1, cachedInput: 0.5, output: 4 } }),
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    runtime.kill = (signal) => child.kill(signal);
    const exited = new Promise<never>((_resolve, reject) =>
      child.once('exit', (code) =>
        reject(new Error(`the runtime exited with ${code} before its work was done`)),
      ),
    );
    await Promise.race([done, exited]);
    // The first cycles warm both processes up; the rest are steady.
    const cycles = arrivals.slice(1).map((at, index) => at - (arrivals[index] as number));
    const steady = cycles.slice(Math.min(10, Math.floor(cycles.length / 5)));
    const overheads = steady.map((cycle) => cycle - modelDelayMs);
    const cycleMedianMs = median(steady);
    return {
      tasks,
      modelDelayMs,
      cycleMedianMs,
      overheadMedianMs: median(overheads),
      overheadP90Ms: percentile(overheads, 90),
      overheadRatio: median(overheads) / modelDelayMs,
    };
  } finally {
    runtime.kill('SIGTERM');
    // Closes the app too.
    await server.close();
    model.closeAllConnections();
    await new Promise<void>((resolve) => model.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
  }
}
