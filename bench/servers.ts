// The servers a benchmark measures, started as users start them, and the way fixtures reach them: tokens
// from `dist/token.js`, data through the HTTP API.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { signToken } from '../src/auth/tokens.js';
import { createDatabase, root, type ServerProcess, startProcess } from './processes.js';

export type DatabaseKind = 'pglite' | 'postgres';
export const DATABASE_NAMES: Record<DatabaseKind, string> = { pglite: 'PGlite', postgres: 'PostgreSQL' };

/** The arguments `npm start` gives node (package.json's start script: `node [flags] dist/main.js`). */
export const startArguments: string[] = (() => {
  const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const [command, ...args] = String(scripts.start).split(/\s+/);
  if (command !== 'node' || args.at(-1) !== 'dist/main.js') {
    throw new Error(`package.json's start script is not "node [flags] dist/main.js": ${scripts.start}`);
  }
  return args;
})();

/** One signing secret per run, given to every gateway and to `dist/token.js`. */
export const jwtSecret = randomBytes(32).toString('base64url');

export interface Gateway extends ServerProcess {
  database: DatabaseKind;
  /** PostgreSQL database name (for its backends' CPU); undefined on PGlite. */
  databaseName: string | undefined;
  dataDir: string | undefined;
  databaseUrl: string | undefined;
}

export interface GatewayOptions {
  name: string;
  database: DatabaseKind;
  runDir: string;
  postgresUrl: string;
  /** An existing data directory (PGlite) or database URL (PostgreSQL) to start on again. */
  reuse?: { dataDir?: string | undefined; databaseUrl?: string | undefined };
  redisUrl?: string;
  env?: Record<string, string>;
}

/**
 * `npm start`'s command (`node [flags] dist/main.js`) with NODE_ENV=production, its own PGlite directory or PostgreSQL database, and the
 * default log level (one JSON line per request, written to a file as a log collector would read it).
 * RATE_LIMIT_PER_MINUTE is raised: each bench caller sends far more than the default 1,200 a minute.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  let dataDir = options.reuse?.dataDir;
  let databaseUrl = options.reuse?.databaseUrl;
  if (options.database === 'pglite') dataDir ??= path.join(options.runDir, `${options.name}-data`);
  else databaseUrl ??= await createDatabase(options.postgresUrl, options.name.replace(/\W/g, '_'));
  // BENCH_CPU_PROF_DIR: each gateway writes a V8 CPU profile (.cpuprofile) there when it stops.
  const profile = process.env.BENCH_CPU_PROF_DIR;
  const server = await startProcess({
    name: options.name,
    args: profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, ...startArguments] : startArguments,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: jwtSecret,
      DATA_DIR: dataDir ?? path.join(options.runDir, `${options.name}-unused`),
      DATABASE_URL: databaseUrl ?? '',
      REDIS_URL: options.redisUrl ?? '',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '100000000',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      METRICS_PORT: '',
      ...options.env,
    },
    logFile: path.join(options.runDir, `${options.name}.log`),
    readyPath: '/readyz',
  });
  return {
    ...server,
    database: options.database,
    databaseName: databaseUrl ? new URL(databaseUrl).pathname.slice(1) : undefined,
    dataDir,
    databaseUrl,
  };
}

/** The baseline: bare graphql-yoga on node:http in a process of its own. */
export function startBareYoga(runDir: string): Promise<ServerProcess> {
  return startProcess({
    name: 'bare-yoga',
    args: ['bench/bare-yoga.mjs'],
    env: { ...process.env, NODE_ENV: 'production' },
    logFile: path.join(runDir, 'bare-yoga.log'),
    readyPath: '/graphql?query=%7B__typename%7D',
  });
}

export const ALL_ROLES = ['chairman', 'operator', 'member', 'agent'];

export interface Caller {
  tenantId: string;
  sub: string;
  token: string;
}

/** A caller of a new tenant, its token signed by `node dist/token.js` as an operator would. */
export async function mintCaller(roles = ALL_ROLES, tenantId = randomUUID()): Promise<Caller> {
  const sub = `bench-${randomBytes(4).toString('hex')}`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['dist/token.js', '--tenant', tenantId, '--sub', sub, '--roles', roles.join(','), '--ttl', '6h'],
    { cwd: root, env: { ...process.env, AUTH_JWT_SECRET: jwtSecret, DATABASE_URL: '' } },
  );
  return { tenantId, sub, token: stdout.trim() };
}

/**
 * Many callers of one tenant, signed in-process by the function `dist/token.js` runs (spawning it
 * thousands of times would take minutes).
 */
export function signCallers(tenantId: string, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      signToken(jwtSecret, { tenantId, sub: `bench-member-${i}`, roles: ['member'], ttl: '6h' }),
    ),
  );
}

/** Sends one GraphQL operation; throws on an HTTP or GraphQL error. */
export async function graphqlRequest<T>(
  server: { url: string },
  caller: Caller,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (!response.ok || body.errors || !body.data) {
    throw new Error(`${query.slice(0, 60)}… answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.data;
}

/** Sends one REST request; throws unless it answers `status`. */
export async function restRequest(
  server: { url: string },
  caller: Caller,
  method: string,
  route: string,
  body: unknown,
  status: number,
): Promise<unknown> {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== status) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}
