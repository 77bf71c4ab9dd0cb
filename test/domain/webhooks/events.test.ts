import { describe, expect, it } from 'vitest';
import { webhookBody, webhookEventOf } from '../../../src/domain/webhooks/events.js';
import type { BusEvent } from '../../../src/events/topics.js';

const event = (type: BusEvent['type'], payload: Record<string, unknown>): BusEvent => ({
  eventId: '2d7c3f4e-1111-4a4a-8888-000000000001',
  tenantId: '2d7c3f4e-2222-4a4a-8888-000000000002',
  type,
  payload,
});

describe('webhookEventOf', () => {
  it('makes a pending task task.queued and a waiting one task.waiting, with its tree, and ignores its other states', () => {
    const task = { task_id: 't1', role: 'cfo', attempts: 1, updated_at: '2026-11-25T20:00:00.000Z' };
    const tree = { parent_task_id: 't0', root_task_id: 't0' };
    expect(webhookEventOf(event('TASK_UPDATED', { ...task, ...tree, status: 'pending' }))).toEqual({
      type: 'task.queued',
      role: 'cfo',
      data: { task_id: 't1', attempts: 1, updated_at: '2026-11-25T20:00:00.000Z', ...tree },
    });
    expect(webhookEventOf(event('TASK_UPDATED', { ...task, ...tree, status: 'waiting' }))?.type).toBe(
      'task.waiting',
    );
    // A root (or an event stored before delegation existed) is its own root.
    expect(webhookEventOf(event('TASK_UPDATED', { ...task, status: 'pending' }))?.data).toMatchObject({
      parent_task_id: null,
      root_task_id: 't1',
    });
    for (const status of ['running', 'awaiting_approval', 'completed', 'failed', 'cancelled']) {
      expect(webhookEventOf(event('TASK_UPDATED', { ...task, status }))).toBeNull();
    }
  });

  it('keeps only allow-listed fields: a pause reason or any new field never reaches the body', () => {
    const paused = event('DOGFOOD_AGENT_PAUSED', {
      role: 'ceo',
      actor_user_id: 'chair-1',
      paused_at: '2026-11-25T20:00:00.000Z',
      reason: 'secret reason',
      credential: 'sk_live_x',
    });
    const mapped = webhookEventOf(paused);
    expect(mapped).toEqual({
      type: 'agent.paused',
      role: 'ceo',
      data: { actor_user_id: 'chair-1', paused_at: '2026-11-25T20:00:00.000Z' },
    });
    const body = webhookBody(
      paused,
      mapped as NonNullable<typeof mapped>,
      new Date('2026-11-25T20:00:01.000Z'),
    );
    expect(body).not.toMatch(/secret|sk_live/);
    expect(JSON.parse(body)).toEqual({
      type: 'agent.paused',
      timestamp: '2026-11-25T20:00:01.000Z',
      data: {
        event_id: paused.eventId,
        tenant_id: paused.tenantId,
        role: 'ceo',
        actor_user_id: 'chair-1',
        paused_at: '2026-11-25T20:00:00.000Z',
      },
    });
  });

  it('carries a breaker’s kind, trip and evidence on agent.paused, figures and ids only', () => {
    const paused = event('DOGFOOD_AGENT_PAUSED', {
      role: 'analyst',
      actor_user_id: 'breaker:consecutive_failures',
      paused_at: '2026-12-03T07:00:00.000Z',
      breaker: {
        kind: 'consecutive_failures',
        trip_id: 'trip-1',
        evidence: { failed_tasks: 3, threshold: 3, task_ids: ['t1', 't2', 't3'], nested: { secret: 'x' } },
      },
    });
    expect(webhookEventOf(paused)).toEqual({
      type: 'agent.paused',
      role: 'analyst',
      data: {
        actor_user_id: 'breaker:consecutive_failures',
        paused_at: '2026-12-03T07:00:00.000Z',
        breaker: {
          kind: 'consecutive_failures',
          trip_id: 'trip-1',
          evidence: { failed_tasks: 3, threshold: 3, task_ids: ['t1', 't2', 't3'] },
        },
      },
    });
  });

  it('makes budget alerts budget.warning and budget.exhausted, the tenant budget for tenant webhooks only', () => {
    // The webhook carries the budget's figures; the bus event has its role and warning threshold besides.
    const data = {
      budget_id: 'b1',
      period: 'day',
      period_start: '2026-11-25T00:00:00.000Z',
      period_end: '2026-11-26T00:00:00.000Z',
      limit_usd: '10',
      spent_usd: '8.5',
      reserved_usd: '1',
    };
    const budget = { ...data, role: 'cfo', warning_threshold: 0.8 };
    expect(webhookEventOf(event('BUDGET_WARNING', budget))).toEqual({
      type: 'budget.warning',
      role: 'cfo',
      data,
    });
    expect(webhookEventOf(event('BUDGET_EXHAUSTED', { ...budget, role: null }))).toEqual({
      type: 'budget.exhausted',
      role: null,
      data,
    });
  });

  it('gives approvals to tenant webhooks without their reason or who asked', () => {
    const mapped = webhookEventOf(
      event('CONNECTOR_CALL_APPROVAL_DECIDED', {
        approval_id: 'a1',
        connector_id: 'c1',
        method: 'POST',
        path: '/v1/customers/42/refunds',
        status: 'rejected',
        requested_by: 'agent-7',
        decided_by: 'chair-1',
        reason: 'not this customer',
        expires_at: '2026-11-26T20:00:00.000Z',
        changed_at: '2026-11-25T20:00:00.000Z',
      }),
    );
    expect(mapped).toEqual({
      type: 'approval.decided',
      role: null,
      data: {
        approval_id: 'a1',
        connector_id: 'c1',
        method: 'POST',
        status: 'rejected',
        expires_at: '2026-11-26T20:00:00.000Z',
        changed_at: '2026-11-25T20:00:00.000Z',
      },
    });
  });

  it('does not carry event types without a mapping', () => {
    expect(webhookEventOf(event('CONNECTOR_INVOKED', { role: 'cfo' }))).toBeNull();
    expect(webhookEventOf(event('CONNECTOR_CHANGED', { connector_id: 'c', changes: ['name'] }))).toBeNull();
    expect(webhookEventOf(event('MODEL_VERSION_CHANGED', {}))).toBeNull();
    expect(webhookEventOf(event('WEBHOOK_DISABLED', { role: 'cfo' }))).toBeNull();
  });
});
