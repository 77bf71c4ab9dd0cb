// Proves the production path and reports its start-up figures: runs npm start's `node [flags] dist/main.js` with
// NODE_ENV=production on a fresh temporary DATA_DIR and a free port, waits for /readyz, checks that a
// second process on the same DATA_DIR is refused, stops it, starts it again on the now existing directory,
// and prints first start, restart and idle RSS. Exits non-zero on any failure; gives up after 3 minutes.
//   node scripts/smoke-start.mjs            (after npm run build; CI runs it)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// npm start's arguments to node (package.json: `node [flags] dist/main.js`), run from the repository root.
const startArguments = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .slice(1);
const giveUp = setTimeout(() => fail('gave up after 3 minutes'), 180_000);
giveUp.unref();
const children = new Set();

function fail(message) {
  console.error(`smoke-start: ${message}`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
}

function run(dataDir) {
  const child = spawn(process.execPath, startArguments, {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'smoke-start-secret-'.padEnd(40, 'x'),
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const ready = /"url":"(http:\/\/[^"]+)".*boardroom is ready/.exec(output);
      if (ready) resolve(ready[1]);
    });
    exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  // A refused second process never gets a URL; whoever awaits `url` still sees the rejection.
  url.catch(() => {});
  return { child, url, exited, output: () => output };
}

async function start(dataDir) {
  const started = performance.now();
  const server = run(dataDir);
  const url = await server.url.catch((error) => fail(error.message));
  const readyz = await fetch(`${url}/readyz`);
  if (readyz.status !== 200) fail(`/readyz answered ${readyz.status}`);
  return { ...server, url, readyMs: Math.round(performance.now() - started) };
}

async function idleRssMb(pid) {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round(kb / 1024);
}

async function stop(server) {
  server.child.kill('SIGTERM');
  const code = await server.exited;
  if (code !== 0) fail(`stopped with status ${code}:\n${server.output()}`);
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-smoke-'));
try {
  const first = await start(dataDir);
  const second = run(dataDir);
  const refusedWith = await second.exited;
  if (refusedWith !== 1 || !second.output().includes(`is in use by process ${first.child.pid}`)) {
    fail(
      `a second process on the same DATA_DIR was not refused (status ${refusedWith}):\n${second.output()}`,
    );
  }
  await stop(first);
  const again = await start(dataDir);
  const rssMb = await idleRssMb(again.child.pid);
  await stop(again);
  console.log(
    `smoke-start: dist/main.js ready on PGlite; first start ${first.readyMs} ms, restart ${again.readyMs} ms, ` +
      `idle RSS ${rssMb} MB; a second process on the same DATA_DIR was refused`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
