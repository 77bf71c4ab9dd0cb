import type { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeConnectorCall } from '../../src/domain/connectors/rate-limits.js';
import { domainRefusalOf } from '../../src/errors.js';
import type { Connector } from '../../src/generated/prisma/client.js';
import { createConnector, template } from '../rest/connectors-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let t: TestApp;
/** A second instance on the same database (and, on PostgreSQL, the same Redis). */
let other: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({ database });
  other = await createTestApp({ database });
});

afterAll(async () => {
  await Promise.all([t?.close(), other?.close()]);
  await database?.drop();
});

async function connectorWith(
  rateLimits: Record<string, number> | undefined,
  caller?: Caller,
): Promise<Connector> {
  const chairman = caller ?? (await t.caller(['chairman']));
  const created = await createConnector(t, chairman, `Limited ${Math.random()}`, {
    rate_limits: rateLimits,
  });
  return t.db.prisma.connector.findUniqueOrThrow({ where: { id: created.id } });
}

/** Spends `calls` calls on `app`; answers how many were admitted, and the refusal of the first refused. */
async function spend(app: TestApp, connector: Connector, calls: number) {
  let admitted = 0;
  let refusal: GraphQLError | undefined;
  for (let call = 0; call < calls; call++) {
    try {
      await consumeConnectorCall(app.app.services, connector);
      admitted++;
    } catch (error) {
      // The domain's refusal as a client receives it, through the one mapping of src/errors.ts.
      refusal ??= domainRefusalOf(error) ?? (error as GraphQLError);
    }
  }
  return { admitted, refusal };
}

describe('a connector’s rate_limits', () => {
  it('admit per_minute calls, then refuse with RATE_LIMITED, 429 and a Retry-After', async () => {
    const connector = await connectorWith({ per_minute: 3 });
    const { admitted, refusal } = await spend(t, connector, 5);
    expect(admitted).toBe(3);
    expect(refusal?.message).toMatch(/^Connector .* allows 3 calls per minute; retry in \d+ s$/);
    const retryAfter = refusal?.extensions.retryAfter as number;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refusal?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      http: { status: 429, headers: { 'Retry-After': String(retryAfter) } },
    });
  });

  it('hold per hour and per day as well, the wait being that of the spent window', async () => {
    const hourly = await connectorWith({ per_hour: 2 });
    const perHour = await spend(t, hourly, 3);
    expect(perHour.admitted).toBe(2);
    expect(perHour.refusal?.extensions.retryAfter).toBeGreaterThan(60);
    expect(perHour.refusal?.extensions.retryAfter).toBeLessThanOrEqual(3600);

    const daily = await connectorWith({ per_minute: 1, per_day: 1 });
    const perDay = await spend(t, daily, 2);
    expect(perDay.admitted).toBe(1);
    expect(perDay.refusal?.extensions.retryAfter).toBeGreaterThan(3600);
    expect(perDay.refusal?.message).toContain('allows 1 calls per minute, 1 per day; retry');
  });

  it('are counted per connector and per tenant', async () => {
    const chairman = await t.caller(['chairman']);
    const first = await connectorWith({ per_minute: 1 }, chairman);
    const second = await connectorWith({ per_minute: 1 }, chairman);
    const elsewhere = await connectorWith({ per_minute: 1 });
    expect((await spend(t, first, 2)).admitted).toBe(1);
    expect((await spend(t, second, 1)).admitted).toBe(1);
    expect((await spend(t, elsewhere, 1)).admitted).toBe(1);
  });

  it('limit nothing when the template has none', async () => {
    const connector = await connectorWith(undefined);
    expect((await spend(t, connector, 50)).admitted).toBe(50);
  });

  it('follow the current template: a raised limit admits the next call', async () => {
    const chairman = await t.caller(['chairman']);
    const connector = await connectorWith({ per_minute: 1 }, chairman);
    expect((await spend(t, connector, 2)).admitted).toBe(1);
    const edited = await t.rest('PUT', `/api/v1/forge/connectors/${connector.id}`, {
      caller: chairman,
      body: { template: template(connector.name, { rate_limits: { per_minute: 10 } }) },
    });
    expect(edited.status).toBe(200);
    const current = await t.db.prisma.connector.findUniqueOrThrow({ where: { id: connector.id } });
    expect((await spend(t, current, 1)).admitted).toBe(1);
  });
});

describe.runIf(databaseKind === 'postgresql')('a connector’s rate_limits across instances', () => {
  it('are shared through Redis: two instances together admit the limit once', async () => {
    const connector = await connectorWith({ per_minute: 4 });
    const counts = [];
    for (let round = 0; round < 3; round++) {
      counts.push((await spend(t, connector, 1)).admitted, (await spend(other, connector, 1)).admitted);
    }
    expect(counts).toEqual([1, 1, 1, 1, 0, 0]);
  });
});

describe.runIf(databaseKind === 'pglite')('a connector’s rate_limits without Redis', () => {
  it('are counted per instance', async () => {
    const connector = await connectorWith({ per_minute: 2 });
    expect((await spend(t, connector, 3)).admitted).toBe(2);
    expect((await spend(other, connector, 3)).admitted).toBe(2);
  });
});
