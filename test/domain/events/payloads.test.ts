import { describe, expect, it } from 'vitest';
import { BUDGET_ALERT_PAYLOAD, type BudgetState } from '../../../src/domain/agents/budgets.js';
import {
  TASK_STEPS_RECORDED_PAYLOAD,
  TASK_UPDATED_PAYLOAD,
  taskUpdatedInsert,
} from '../../../src/domain/agents/task-events.js';
import { EVENT_ENVELOPE } from '../../../src/events/outbox.js';
import { eventPayload } from '../../../src/events/payload.js';
import { Prisma } from '../../../src/generated/prisma/client.js';

/** The keys a `jsonb_build_object(...)` writes, in order: its odd arguments, string literals. */
function sqlKeys(sql: string): string[] {
  return [...sql.matchAll(/(?:\(|, )'([a-z_]+)', /g)].map((match) => match[1] as string);
}

const budget: BudgetState = {
  id: 'b',
  tenantId: 't',
  role: null,
  period: 'month',
  limitUsd: new Prisma.Decimal('10.50'),
  limitTokens: null,
  warningThreshold: new Prisma.Decimal('0.80'),
  estimateUsd: new Prisma.Decimal(1),
  estimateTokens: 0n,
  periodStart: new Date('2026-11-01T00:00:00Z'),
  periodEnd: new Date('2026-12-01T00:00:00Z'),
  spentUsd: new Prisma.Decimal('8.5'),
  spentTokens: 900n,
  reservedUsd: new Prisma.Decimal(0),
  reservedTokens: 0n,
  overshootUsd: new Prisma.Decimal(0),
  warnedAt: null,
  exhaustedAt: null,
  updatedAt: new Date('2026-11-20T10:00:00Z'),
};

describe('event payloads', () => {
  it('builds the same keys in TypeScript and in SQL, in declaration order', () => {
    const task = {
      id: 'x',
      role: 'cfo',
      status: 'pending',
      attempts: 0,
      updatedAt: new Date(0),
      parentTaskId: null,
      rootTaskId: null,
    };
    const forms = [
      [TASK_UPDATED_PAYLOAD, TASK_UPDATED_PAYLOAD.of(task), TASK_UPDATED_PAYLOAD.sql('c')],
      [BUDGET_ALERT_PAYLOAD, BUDGET_ALERT_PAYLOAD.of(budget), BUDGET_ALERT_PAYLOAD.sql('s')],
      [
        TASK_STEPS_RECORDED_PAYLOAD,
        TASK_STEPS_RECORDED_PAYLOAD.of({
          id: 'x',
          role: 'cfo',
          rootTaskId: null,
          claims: 1,
          stepsRecorded: 4,
        }),
        TASK_STEPS_RECORDED_PAYLOAD.sql('c'),
      ],
      [
        EVENT_ENVELOPE,
        EVENT_ENVELOPE.of({ eventId: 'e', type: 'TASK_UPDATED', tenantId: 't' }),
        EVENT_ENVELOPE.sql({ eventId: 'event_id::text', type: 'type', tenantId: 'tenant_id::text' }),
      ],
    ] as const;
    for (const [payload, object, sql] of forms) {
      expect(Object.keys(object)).toEqual(payload.keys);
      expect(sqlKeys(sql.sql)).toEqual(payload.keys);
    }
  });

  it('writes TASK_UPDATED with its delegation tree', () => {
    expect(
      TASK_UPDATED_PAYLOAD.of({
        id: 'x',
        role: 'cfo',
        status: 'running',
        attempts: 2,
        updatedAt: new Date(0),
        parentTaskId: 'p',
        rootTaskId: 'r',
      }),
    ).toEqual({
      task_id: 'x',
      role: 'cfo',
      status: 'running',
      attempts: 2,
      updated_at: '1970-01-01T00:00:00.000Z',
      parent_task_id: 'p',
      root_task_id: 'r',
    });
    const insert = taskUpdatedInsert('e', 't', 'claimed');
    expect(insert.sql.replace(/\s+/g, ' ').trim()).toBe(
      "INSERT INTO outbox_events (id, tenant_id, type, payload) SELECT ?::uuid, ?::uuid, 'TASK_UPDATED', " +
        "jsonb_build_object('task_id', c.id::text, 'role', c.role, 'status', c.status::text, 'attempts', c.attempts, " +
        `'updated_at', to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ` +
        "'parent_task_id', c.parent_task_id::text, 'root_task_id', coalesce(c.root_task_id, c.id)::text) || " +
        "jsonb_build_object('event_id', ?::text, 'type', 'TASK_UPDATED', 'tenant_id', ?::text) FROM claimed c",
    );
    expect(insert.values).toEqual(['e', 't', 'e', 't']);
  });

  it('writes the budget alerts as they always did', () => {
    expect(JSON.stringify(BUDGET_ALERT_PAYLOAD.of(budget))).toBe(
      '{"budget_id":"b","role":null,"period":"month","period_start":"2026-11-01T00:00:00.000Z",' +
        '"period_end":"2026-12-01T00:00:00.000Z","limit_usd":"10.5","spent_usd":"8.5","reserved_usd":"0",' +
        '"warning_threshold":0.8,"limit_tokens":null,"spent_tokens":"900"}',
    );
    expect(BUDGET_ALERT_PAYLOAD.sql('s').values).toEqual(['*']);
  });

  it('refuses a key SQL would have to quote', () => {
    expect(() => eventPayload<{ a: string }>()({ "it's": { ts: (s) => s.a, sql: () => 'a' } })).toThrow();
  });
});
