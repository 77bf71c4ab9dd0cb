import fc from 'fast-check';
import type { Caller, TestApp } from '../support/app.js';

/**
 * The seed of the short run inside `npm test`: fixed, so that the suite answers the same for the same code.
 * New inputs are explored by `npm run fuzz`, which draws a fresh seed each time.
 */
const SUITE_SEED = 20_261_122;

/**
 * Runs per property: a short run inside `npm test`, a long one with `npm run fuzz` (FUZZ_RUNS, default 2000
 * there). FUZZ_SEED replays the run a failure printed.
 */
export const fuzzParameters: fc.Parameters<unknown> = {
  numRuns: Number(process.env.FUZZ_RUNS ?? 5),
  ...(process.env.FUZZ_SEED
    ? { seed: Number(process.env.FUZZ_SEED) }
    : process.env.FUZZ_RUNS
      ? {}
      : { seed: SUITE_SEED }),
  // The short run stops itself before the test's timeout (a property left running would write into the
  // next one's row counts); the long run has no timeout.
  ...(process.env.FUZZ_RUNS ? {} : { interruptAfterTimeLimit: 40_000, markInterruptAsFailure: false }),
};

/** Connector credentials can be stored: a route refusing for want of a key would answer every input alike. */
export const FUZZ_SECRETS_KEY = `fuzz:${Buffer.alloc(32, 7).toString('base64')}`;

/** A long run may take minutes per property; the short run stays within the suite's timeout. */
export const fuzzTimeout = process.env.FUZZ_RUNS ? 0 : 60_000;

/** Row count of every table (one statement), to show that a refused request changed nothing. */
export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const tables = await t.db.prisma.$queryRawUnsafe<{ name: string }[]>(
    `SELECT table_name::text AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'
     ORDER BY table_name`,
  );
  const columns = tables.map(({ name }) => `(SELECT count(*) FROM "${name}")::int AS "${name}"`);
  const [counts] = await t.db.prisma.$queryRawUnsafe<Record<string, number>[]>(
    `SELECT ${columns.join(', ')}`,
  );
  return counts ?? {};
}

export interface Answer {
  status: number;
  body: unknown;
}

/** Sends a REST request with a body written as it is. */
export async function sendRest(
  t: TestApp,
  method: string,
  path: string,
  caller: Caller,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await t.app.yoga.fetch(`http://yoga${path}`, {
    method,
    headers: {
      authorization: `Bearer ${caller.token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {}
  return { status: response.status, body: parsed };
}

/** Sends a GraphQL request whose variables are already JSON text. */
export async function sendGraphql(
  t: TestApp,
  query: string,
  variables: string,
  caller: Caller,
): Promise<Answer> {
  const response = await t.app.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${caller.token}`,
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
    },
    body: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed };
}

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** An error yoga masked: something the server did not expect, the GraphQL form of a 500. */
export function unexpectedErrors(body: unknown): string[] {
  const errors = (body as GraphqlBody | null)?.errors ?? [];
  return errors
    .filter(
      (error) => error.message === 'Unexpected error.' || error.extensions?.code === 'INTERNAL_SERVER_ERROR',
    )
    .map((error) => JSON.stringify(error));
}

export function hasErrors(body: unknown): boolean {
  return ((body as GraphqlBody | null)?.errors?.length ?? 0) > 0;
}

/** Short text of an answer for a failure message. */
export function describeAnswer(answer: Answer): string {
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return `${answer.status} ${text.length > 600 ? `${text.slice(0, 600)}…` : text}`;
}

/**
 * The two properties of every request: the server never answers 5xx (nor masks an unexpected GraphQL error),
 * and a request it refuses changes no row.
 */
export async function expectSafeAnswer(
  t: TestApp,
  send: () => Promise<Answer>,
  refused: (answer: Answer) => boolean,
): Promise<void> {
  // The lease sweeper is the only background writer (a lapsed lease becomes an outbox event): keep the
  // leases of running tasks from lapsing so that counts change only through the request.
  await t.db.prisma.task.updateMany({
    where: { status: 'running' },
    data: { leaseExpiresAt: new Date(Date.now() + 60 * 60_000) },
  });
  const before = await rowCounts(t);
  const answer = await send();
  if (answer.status >= 500) throw new Error(`answered ${describeAnswer(answer)}`);
  const unexpected = unexpectedErrors(answer.body);
  if (unexpected.length > 0) throw new Error(`unexpected error: ${unexpected.join(', ')}`);
  if (refused(answer)) {
    const after = await rowCounts(t);
    const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
    if (changed.length > 0) {
      throw new Error(
        `refused with ${describeAnswer(answer)} but changed ${changed
          .map((table) => `${table} ${before[table]}→${after[table]}`)
          .join(', ')}`,
      );
    }
  }
}

/** fc.assert with the run parameters; its failure message carries the seed and the counterexample. */
export async function assertProperty<Ts extends [unknown, ...unknown[]]>(
  arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  predicate: (...values: Ts) => Promise<void>,
): Promise<void> {
  await fc.assert(fc.asyncProperty(...arbitraries, predicate), fuzzParameters as fc.Parameters<Ts>);
}
