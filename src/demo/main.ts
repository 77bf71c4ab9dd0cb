#!/usr/bin/env node
// A company you can watch, offline:
//   npm run demo [-- --port 4000] [--data-dir ./data-demo] [--interval 30] [--auto-approve 20]
// Starts the gateway on PGlite in its own data directory, a scripted Chat Completions server and a demo
// ledger on loopback, seeds the demo company through the API and runs the reference runtime for the CEO,
// CFO and COO. No key, no network. Ctrl-C stops everything (tasks in progress go back to the queue).
// See docs/demo.md.
import '../wasm-tiering.js';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config.js';
import { DataDirError } from '../db/data-dir.js';
import { DataDirLockedError } from '../db/data-dir-lock.js';
import { ListenError } from '../listen.js';
import { DEMO_ROLES, startDemo } from './run.js';

const usage =
  'usage: npm run demo -- [--port 4000] [--upstream-port 4001] [--data-dir ./data-demo] [--interval 30] [--auto-approve <seconds>]';

function refuse(problem: string): never {
  console.error(problem);
  console.error(usage);
  process.exit(2);
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string', default: '4000' },
      'upstream-port': { type: 'string' },
      'data-dir': { type: 'string', default: './data-demo' },
      interval: { type: 'string', default: '30' },
      'auto-approve': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  refuse((error as Error).message);
}
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const integer = (name: string, min: number, max: number): number | undefined => {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    refuse(`--${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`);
  }
  return Number(raw);
};
const port = integer('port', 0, 65535) ?? 4000;
const upstreamPort = integer('upstream-port', 0, 65535) ?? (port === 0 || port === 65535 ? 0 : port + 1);
const intervalSeconds = integer('interval', 0, 86_400) ?? 30;
const autoApproveSeconds = integer('auto-approve', 0, 86_400);
const dataDir = String(values['data-dir'] ?? '').trim();
if (!dataDir) refuse('--data-dir must name a directory');

try {
  const demo = await startDemo({ dataDir, port, upstreamPort, intervalSeconds, autoApproveSeconds });
  console.log(`
Boardroom demo: a company of ${DEMO_ROLES.length} agents (${DEMO_ROLES.join(', ')}) on a scripted model, offline.
Data: ${dataDir} (your ./data is not touched). Tenant ${demo.tenantId}.

  Console:  ${demo.dashboardUrl}
  GraphiQL: ${demo.url}/graphql   REST docs: ${demo.url}/docs
  export TOKEN=${demo.chairmanToken}

Within a minute: tasks claimed, delegated and completed with their cost, and a payment waiting for your
approval in the console's inbox${autoApproveSeconds === undefined ? '' : ` (approved by the demo after ${autoApproveSeconds} s)`}.
A routine queues the CFO's ledger check every minute${intervalSeconds > 0 ? `; a new chat is queued every ${intervalSeconds} s` : ''}.
Ctrl-C stops everything.
`);
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      console.log('Stopping the demo…');
      demo.close().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(`stopping failed: ${(error as Error).message}`);
          process.exit(1);
        },
      );
    });
  }
} catch (error) {
  if (error instanceof DataDirLockedError) {
    console.error(`${error.message} (the demo's DATA_DIR is --data-dir)`);
    process.exit(1);
  }
  if (error instanceof ConfigError || error instanceof DataDirError) {
    console.error((error as Error).message);
    process.exit(1);
  }
  if (error instanceof ListenError || (error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    console.error(`${(error as Error).message} (choose other ports with --port and --upstream-port)`);
    process.exit(1);
  }
  throw error;
}
