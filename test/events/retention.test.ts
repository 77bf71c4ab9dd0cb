import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openEventStream } from '../../src/events/replay.js';
import { pruneOutbox } from '../../src/events/retention.js';
import { createTestApp, type TestApp } from '../support/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const HOUR = 3_600_000;

async function outboxRow(tenantId: string, publishedHoursAgo: number | null, createdHoursAgo = 48) {
  const id = randomUUID();
  await t.db.prisma.outboxEvent.create({
    data: {
      id,
      tenantId,
      type: 'TASK_UPDATED',
      payload: { event_id: id },
      createdAt: new Date(Date.now() - createdHoursAgo * HOUR),
      publishedAt: publishedHoursAgo === null ? null : new Date(Date.now() - publishedHoursAgo * HOUR),
    },
  });
  return id;
}

describe('outbox retention', () => {
  it('prunes published events older than the retention and keeps the rest, in batches', async () => {
    const tenantId = randomUUID();
    await t.app.services.tenants.ensure(tenantId);
    const old = [
      await outboxRow(tenantId, 30),
      await outboxRow(tenantId, 25),
      await outboxRow(tenantId, 24.5),
    ];
    const unpublished = await outboxRow(tenantId, null);
    const recent = await outboxRow(tenantId, 23);

    const deleted = await pruneOutbox(t.db.prisma, { retentionHours: 24, batchSize: 2 });

    expect(deleted).toBeGreaterThanOrEqual(3);
    const left = await t.db.prisma.outboxEvent.findMany({ where: { tenantId }, select: { id: true } });
    expect(left.map((row) => row.id).sort()).toEqual([unpublished, recent].sort());
    expect(old.every((id) => !left.some((row) => row.id === id))).toBe(true);
  });

  it('makes a pruned event an expired resume point', async () => {
    const tenantId = randomUUID();
    await t.app.services.tenants.ensure(tenantId);
    const pruned = await outboxRow(tenantId, 30);
    await pruneOutbox(t.db.prisma, { retentionHours: 24 });

    await expect(
      openEventStream({
        prisma: t.db.prisma,
        bus: t.app.services.bus,
        tenantId,
        types: ['TASK_UPDATED'],
        after: pruned,
      }),
    ).rejects.toMatchObject({ extensions: { code: 'RESUME_POINT_EXPIRED' } });
  });

  it('reads EVENT_RETENTION_HOURS, 24 by default, and refuses a non-positive one', () => {
    expect(loadConfig({}).eventRetentionHours).toBe(24);
    expect(loadConfig({ EVENT_RETENTION_HOURS: '72' }).eventRetentionHours).toBe(72);
    expect(() => loadConfig({ EVENT_RETENTION_HOURS: '0' })).toThrow(/EVENT_RETENTION_HOURS/);
  });
});
