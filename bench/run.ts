// npm run bench: throughput of our gateway and REST routes as ratios to a bare graphql-yoga server
// measured in the same run, plus cold start to ready and idle memory of the built server (`node dist/main.js`) on PGlite.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSchema, createYoga } from 'graphql-yoga';
import { createTestApp } from '../test/support/app.js';
import { listen } from '../test/support/ws.js';
import { measure, ratio, type Throughput } from './measure.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rows: { name: string; result: Throughput; baseline: number }[] = [];
const extras: string[] = [];
const graphqlBody = JSON.stringify({ query: '{ __typename }' });
const json = { 'content-type': 'application/json' };

async function bareYoga(): Promise<{ url: string; close(): Promise<void> }> {
  const yoga = createYoga({
    schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }),
    logging: false,
    landingPage: false,
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function coldStart(dataDir: string): Promise<{ readyMs: number; rssMb: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      AUTH_JWT_SECRET: 'b'.repeat(40),
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (ready?.[1]) resolve(ready[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  while ((await fetch(`${url}/readyz`)).status !== 200) {}
  const readyMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
  const rssMb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return { readyMs, rssMb };
}

const bare = await bareYoga();
const t = await createTestApp();
const server = await listen(t);
try {
  const caller = await t.caller(['chairman', 'operator', 'agent']);
  const auth = { ...json, authorization: `Bearer ${caller.token}` };

  await measure(`${bare.url}/graphql`, { method: 'POST', headers: json, body: graphqlBody }, { seconds: 1 });
  await measure(
    `${server.url}/graphql`,
    { method: 'POST', headers: auth, body: graphqlBody },
    { seconds: 1 },
  );
  const baseline = await measure(
    `${bare.url}/graphql`,
    { method: 'POST', headers: json, body: graphqlBody },
    { seconds },
  );
  rows.push({ name: 'bare graphql-yoga { __typename }', result: baseline, baseline: baseline.perSecond });
  rows.push({
    name: 'gateway { __typename } (auth, plugins)',
    result: await measure(
      `${server.url}/graphql`,
      { method: 'POST', headers: auth, body: graphqlBody },
      { seconds },
    ),
    baseline: baseline.perSecond,
  });
  const { domainBenchmarks } = await import('./domains.js');
  for (const bench of domainBenchmarks) {
    const prepared = await bench.prepare(t, caller, server.url);
    if (!prepared) continue;
    rows.push({
      name: bench.name,
      result: await measure(prepared.url, prepared.init, { seconds }),
      baseline: baseline.perSecond,
    });
    if (bench.perRequestTargetMs) {
      const single = await measure(prepared.url, prepared.init, { seconds, concurrency: 1 });
      extras.push(
        `${bench.name}, one client: p50 ${single.p50Ms.toFixed(2)} ms, p99 ${single.p99Ms.toFixed(2)} ms per request (target < ${bench.perRequestTargetMs} ms)`,
      );
    }
  }
  const { measureIngestion } = await import('./experiments.js');
  extras.push(
    `A/B event ingestion through recordAbTestEvents: ${(await measureIngestion(t, caller, seconds)).toFixed(0)} events/s`,
  );
} finally {
  await server.close();
  await t.close();
  await bare.close();
}

const { measurePropagation } = await import('./finetuning.js');
extras.push(await measurePropagation());
const startDir = await mkdtemp(path.join(tmpdir(), 'boardroom-bench-'));
const first = await coldStart(startDir);
const restart = await coldStart(startDir);
await rm(startDir, { recursive: true, force: true });
const database = process.env.TEST_DB === 'postgres' ? 'PostgreSQL' : 'PGlite';
console.log(`\nBoardroom benchmark (${database}, ${seconds} s per row, 16 concurrent clients, loopback)\n`);
console.log('| case | req/s | ratio to bare yoga | p50 ms | p99 ms |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const { name, result, baseline } of rows) {
  console.log(
    `| ${name} | ${result.perSecond.toFixed(0)} | ${ratio(result.perSecond, baseline).toFixed(2)} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} |`,
  );
}
for (const line of extras) console.log(`\n${line}`);
console.log(
  `\nfirst start to ready (dist/main.js, PGlite, empty data dir: initdb and all migrations): ${first.readyMs.toFixed(0)} ms`,
);
console.log(
  `cold start to ready (dist/main.js, PGlite, existing data dir): ${restart.readyMs.toFixed(0)} ms (target < 1500)`,
);
console.log(`idle memory after start (RSS): ${restart.rssMb.toFixed(0)} MB (target < 250 on PGlite)`);
