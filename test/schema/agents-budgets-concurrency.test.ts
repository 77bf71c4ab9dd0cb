import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { Prisma } from '../../src/generated/prisma/client.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { claimNext, complete, Fail, queueTasks, setBudget } from './agents-budgets-support.js';

const RUNTIMES = 200;
const ROLES = ['cfo', 'cto'] as const;

// 200 requests in flight at once: above the default door (pool + queue), which would answer some 503.
const env = { DATABASE_QUEUE_SIZE: '400' };
const limits = loadConfig(env).database;

let database: TestDatabase;
let a: TestApp;

/** An instance with a pool of its own on the test's PostgreSQL database, or on its PGlite. */
async function instance(): Promise<TestApp> {
  if (!database.url) return createTestApp({ database, env });
  const db = await openDatabase({ databaseUrl: database.url, dataDir: 'memory://', limits });
  return createTestApp({ database: { db, url: database.url, drop: () => db.close() }, env });
}

beforeAll(async () => {
  database = await createTestDatabase();
  a = await instance();
});
afterAll(async () => {
  await a.close();
  if (database.url) await a.db.close();
  await database.drop();
});

/**
 * Runs a call again after a 503, as a runtime honouring Retry-After would (sooner, to keep the test short):
 * 200 transactions at once queue longer than a transaction may wait to start, most of all on PGlite's one
 * connection, and a transaction that could not start or finish in time wrote nothing.
 */
async function retrying<T>(call: () => Promise<T>, run: Run): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!String(error).includes('SERVICE_UNAVAILABLE')) throw error;
      run.retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
    }
  }
}

interface Run {
  /** Calls answered 503 and made again. */
  retries: number;
  /** The most the tenant's budget was seen to hold in reservations. */
  mostReserved: Prisma.Decimal;
  tenantId: string;
  /** Every (spent + reserved, limit) seen while the runtimes ran, per budget. */
  violations: string[];
  samples: number;
  claimed: string[];
  outcomes: Map<string, number>;
  charged: Map<string, Prisma.Decimal>;
}

/**
 * 200 agent runtimes spread over the given instances claim from two roles whose budgets (and the
 * tenant's) hold far fewer tasks than are queued; each completes what it got with a cost at most the
 * estimate (every tenth fails its first task instead), then claims again until refused. A reader samples the budgets meanwhile.
 */
async function race(instances: TestApp[]): Promise<Run> {
  const main = instances[0] as TestApp;
  const chairman = await main.caller(['chairman']);
  const tenantId = chairman.tenantId;
  await main.app.services.tenants.ensure(tenantId);
  await setBudget(main, chairman, { period: 'day', limitUsd: '1.5', estimateUsd: '0.05' });
  for (const role of ROLES)
    await setBudget(main, chairman, { role, period: 'day', limitUsd: '1', estimateUsd: '0.1' });
  for (const role of ROLES) await queueTasks(main, tenantId, role, 100);

  const run: Run = {
    retries: 0,
    mostReserved: new Prisma.Decimal(0),
    tenantId,
    violations: [],
    samples: 0,
    claimed: [],
    outcomes: new Map(),
    charged: new Map(),
  };
  let running = true;
  // On PostgreSQL the reader has a connection of its own, so it keeps sampling while the pools are full.
  const reader = database.url ? new pg.Client({ connectionString: database.url }) : null;
  await reader?.connect();
  const readBudgets = async () => {
    if (!reader) return main.db.prisma.budget.findMany({ where: { tenantId } });
    const { rows } = await reader.query<{ role: string; spent: string; reserved: string; limit: string }>(
      'SELECT role, spent_usd::text AS spent, reserved_usd::text AS reserved, limit_usd::text AS limit FROM budgets WHERE tenant_id = $1',
      [tenantId],
    );
    return rows.map((row) => ({
      role: row.role,
      spentUsd: new Prisma.Decimal(row.spent),
      reservedUsd: new Prisma.Decimal(row.reserved),
      limitUsd: new Prisma.Decimal(row.limit),
    }));
  };
  const sampler = (async () => {
    while (running) {
      const budgets = await readBudgets();
      run.samples += 1;
      for (const budget of budgets) {
        if (budget.role === '*') run.mostReserved = Prisma.Decimal.max(run.mostReserved, budget.reservedUsd);
        if (budget.spentUsd.plus(budget.reservedUsd).greaterThan(budget.limitUsd))
          run.violations.push(
            `${budget.role}: ${budget.spentUsd} + ${budget.reservedUsd} > ${budget.limitUsd}`,
          );
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();

  const runtime = async (index: number) => {
    const instance = instances[index % instances.length] as TestApp;
    const agent: Caller = await instance.caller(['agent'], { tenantId, sub: `runtime-${index}` });
    const role = ROLES[index % ROLES.length] as string;
    for (let attempt = 0; ; attempt += 1) {
      const claim = await retrying(() => claimNext(instance, agent, role), run);
      run.outcomes.set(claim.outcome, (run.outcomes.get(claim.outcome) ?? 0) + 1);
      if (!claim.task) return;
      run.claimed.push(claim.task.id);
      if (index % 10 === 0 && attempt === 0) {
        const id = claim.task.id;
        await retrying(async () => {
          const result = await instance.graphql(Fail, { id, error: 'gave up' }, agent);
          if (result.errors) throw new Error(JSON.stringify(result.errors));
        }, run);
        continue;
      }
      // 0.01 to 0.05: never above either estimate, so nothing may pass a limit.
      const cost = new Prisma.Decimal(((index % 5) + 1) / 100);
      const id = claim.task.id;
      await retrying(() => complete(instance, agent, id, cost.toNumber()), run);
      run.charged.set(role, (run.charged.get(role) ?? new Prisma.Decimal(0)).plus(cost));
    }
  };
  try {
    await Promise.all(Array.from({ length: RUNTIMES }, (_, index) => runtime(index)));
  } finally {
    running = false;
    await sampler;
    await reader?.end();
  }
  return run;
}

async function expectInvariant(t: TestApp, run: Run) {
  expect(run.violations).toEqual([]);
  expect(run.samples).toBeGreaterThan(0);
  // Runtimes held reservations at the same time (several estimates at once), so the check was contended.
  expect(run.mostReserved.greaterThan('0.05')).toBe(true);
  console.info(
    `${databaseKind}: ${run.claimed.length} claims, ${JSON.stringify(Object.fromEntries(run.outcomes))}, ` +
      `${run.samples} samples, most reserved ${run.mostReserved.toFixed()}, ${run.retries} calls retried after 503`,
  );
  expect(new Set(run.claimed).size).toBe(run.claimed.length);
  const budgets = await t.db.prisma.budget.findMany({ where: { tenantId: run.tenantId } });
  const byRole = new Map(budgets.map((budget) => [budget.role, budget]));
  let total = new Prisma.Decimal(0);
  for (const role of ROLES) {
    const charged = run.charged.get(role) ?? new Prisma.Decimal(0);
    total = total.plus(charged);
    expect(byRole.get(role)?.spentUsd.toFixed()).toBe(charged.toFixed());
    expect(byRole.get(role)?.reservedUsd.toFixed()).toBe('0');
  }
  const tenant = byRole.get('*');
  expect(tenant?.spentUsd.toFixed()).toBe(total.toFixed());
  expect(tenant?.reservedUsd.toFixed()).toBe('0');
  expect(tenant?.spentUsd.lessThanOrEqualTo(tenant.limitUsd)).toBe(true);
  expect(tenant?.overshootUsd.toFixed()).toBe('0');
  expect(await t.db.prisma.budgetReservation.count({ where: { task: { tenantId: run.tenantId } } })).toBe(0);
  // Completed tasks' costs are the charges, exactly.
  const completed = await t.db.prisma.task.aggregate({
    where: { tenantId: run.tenantId, status: 'completed' },
    _sum: { costUsd: true },
  });
  expect(completed._sum.costUsd?.toFixed()).toBe(total.toFixed());
  // Every runtime stopped on a budget (work was left in the queue), never on an empty queue.
  expect(run.outcomes.get('queue_empty') ?? 0).toBe(0);
  expect(
    await t.db.prisma.task.count({ where: { tenantId: run.tenantId, status: 'pending' } }),
  ).toBeGreaterThan(0);
  expect(await t.db.prisma.task.count({ where: { tenantId: run.tenantId, status: 'running' } })).toBe(0);
}

describe(`budgets under concurrency (${databaseKind})`, () => {
  it('never let spent + reserved pass a limit with 200 runtimes claiming and completing at once', async () => {
    const run = await race([a]);

    await expectInvariant(a, run);
  }, 120_000);

  it.skipIf(databaseKind === 'pglite')(
    'never let spent + reserved pass a limit with 200 runtimes spread over two instances',
    async () => {
      const b = await instance();
      try {
        const run = await race([a, b]);

        await expectInvariant(a, run);
      } finally {
        await b.close();
        await b.db.close();
      }
    },
    120_000,
  );
});
