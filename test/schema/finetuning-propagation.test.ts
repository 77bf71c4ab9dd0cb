import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind } from '../support/database.js';
import { serveTestApp } from '../support/fixtures.js';
import { subscribe } from '../support/ws.js';
import {
  productionGenerations,
  productionId,
  promote,
  Rollback,
  register,
  VersionChanged,
} from './finetuning-support.js';

describe('productionModel response cache', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers the new production right after a rollback on the same instance', async () => {
    const operator = await t.caller(['operator']);
    const [v1, v2] = await productionGenerations(t, operator, 'read-your-write', 2);
    expect(await productionId(t, operator, 'read-your-write')).toBe(v2);
    await t.graphql(
      Rollback,
      { tenantId: operator.tenantId, baseModel: 'read-your-write', input: { reason: 'x' } },
      operator,
    );
    expect(await productionId(t, operator, 'read-your-write')).toBe(v1);
  });

  it('replaces a cached null once the first production is promoted', async () => {
    const operator = await t.caller(['operator']);
    const id = await register(t, operator, 'first-production');
    expect(await productionId(t, operator, 'first-production')).toBeNull();
    await promote(t, operator, id);
    expect(await productionId(t, operator, 'first-production')).toBe(id);
  });
});

describe('productionModel response cache and the bus', () => {
  // Its own bus, and state written straight to the database: no event reaches this instance but the
  // one a test publishes.
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { REDIS_URL: '' } });
  });
  afterAll(() => t.close());

  async function seed(
    tenantId: string,
    baseModel: string,
    statuses: ('production' | 'archived' | 'ready')[],
  ) {
    const line = await t.db.prisma.modelLine.create({ data: { tenantId, baseModel } });
    const ids: string[] = [];
    for (const [index, deploymentStatus] of statuses.entries()) {
      const version = await t.db.prisma.modelVersion.create({
        data: {
          tenantId,
          lineId: line.id,
          baseModel,
          provider: 'openai',
          versionNumber: index + 1,
          deploymentStatus,
          trainingDataHash: 'sha256:seed',
          hyperparameters: {},
          evaluationMetrics: {},
        },
      });
      ids.push(version.id);
    }
    return ids;
  }

  // One test: each event also schedules a later second invalidation, which would clear the next
  // test's cached answers before it could see them served from the cache.
  it('serves cached answers, a cached null included, until a MODEL_VERSION_CHANGED event replaces them within 1 s', async () => {
    const operator = await t.caller(['operator']);
    expect(await productionId(t, operator, 'cached-null')).toBeNull(); // also creates the tenant
    const [v1, v2] = await seed(operator.tenantId, 'cached', ['production', 'ready']);
    expect(await productionId(t, operator, 'cached')).toBe(v1);
    const [first] = await seed(operator.tenantId, 'cached-null', ['production']);
    // Changes this instance did not make: only the bus can tell it.
    await t.db.prisma.modelVersion.update({
      where: { id: v1 as string },
      data: { deploymentStatus: 'archived' },
    });
    await t.db.prisma.modelVersion.update({
      where: { id: v2 as string },
      data: { deploymentStatus: 'production' },
    });
    expect(await productionId(t, operator, 'cached')).toBe(v1);
    expect(await productionId(t, operator, 'cached-null')).toBeNull();
    await t.app.services.bus.publish({
      eventId: randomUUID(),
      type: 'MODEL_VERSION_CHANGED',
      tenantId: operator.tenantId,
      payload: {
        base_model: 'cached',
        model_version_id: v2,
        deployment_status: 'production',
        version_number: 2,
      },
    });
    await expect.poll(() => productionId(t, operator, 'cached'), { timeout: 1000, interval: 20 }).toBe(v2);
    expect(await productionId(t, operator, 'cached-null')).toBe(first);
  });
});

describe('modelVersionChanged subscription', () => {
  let t: TestApp;
  let server: RunningServer;
  serveTestApp((app) => ({ t, server } = app));

  it('delivers the retirement and the restoration of a rollback', async () => {
    const operator = await t.caller(['operator']);
    const [v1, v2] = await productionGenerations(t, operator, 'watched', 2);
    const subscription = await subscribe(server.url, operator, VersionChanged, { baseModel: 'watched' });
    await t.graphql(
      Rollback,
      { tenantId: operator.tenantId, baseModel: 'watched', input: { reason: 'x' } },
      operator,
    );
    const events = [await subscription.next(), await subscription.next()].map(
      (event) => event.data?.modelVersionChanged,
    );
    await subscription.close();
    expect(events.sort((a, b) => (a?.versionNumber ?? 0) - (b?.versionNumber ?? 0))).toEqual([
      {
        tenantId: operator.tenantId,
        baseModel: 'watched',
        modelVersionId: v1,
        versionNumber: 1,
        deploymentStatus: 'production',
        previousStatus: 'archived',
        modelVersion: { id: v1, deploymentStatus: 'production' },
      },
      {
        tenantId: operator.tenantId,
        baseModel: 'watched',
        modelVersionId: v2,
        versionNumber: 2,
        deploymentStatus: 'retired',
        previousStatus: 'production',
        modelVersion: { id: v2, deploymentStatus: 'retired' },
      },
    ]);
  });

  it('delivers only the subscriber’s tenant and base model', async () => {
    const operator = await t.caller(['operator']);
    const outsider = await t.caller(['operator']);
    const subscription = await subscribe(server.url, operator, VersionChanged, { baseModel: 'isolated' });
    await register(t, outsider, 'isolated');
    await register(t, operator, 'other-model');
    const mine = await register(t, operator, 'isolated');
    const event = await subscription.next();
    await subscription.close();
    expect(event.data?.modelVersionChanged).toMatchObject({
      modelVersionId: mine,
      deploymentStatus: 'ready',
      previousStatus: null,
    });
  });
});

describe('two instances on one database', () => {
  // PGlite is an embedded, single-process database: its instances each have their own in-process bus,
  // so changes cross instances only through Redis, which the postgres project provides.
  it.skipIf(databaseKind === 'pglite')(
    'shows a rollback made on one instance through productionModel on the other within 1 s, despite its cache',
    async () => {
      const database = await createTestDatabase();
      const a = await createTestApp({ database });
      const b = await createTestApp({ database });
      try {
        const operator = await a.caller(['operator']);
        const [v1, v2] = await productionGenerations(a, operator, 'fleet', 2);
        expect(await productionId(b, operator, 'fleet')).toBe(v2);
        const response = await a.rest(
          'POST',
          `/api/v1/finetuning/models/${operator.tenantId}/fleet/rollback`,
          {
            caller: operator,
            body: { reason: 'regression' },
          },
        );
        expect(response.status).toBe(200);
        await expect.poll(() => productionId(b, operator, 'fleet'), { timeout: 1000, interval: 20 }).toBe(v1);
      } finally {
        await a.close();
        await b.close();
        await database.drop();
      }
    },
  );
});
