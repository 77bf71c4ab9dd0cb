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
  it('makes a pending task task.queued, and ignores its other states', () => {
    const task = { task_id: 't1', role: 'cfo', attempts: 1, updated_at: '2026-11-25T20:00:00.000Z' };
    expect(webhookEventOf(event('TASK_UPDATED', { ...task, status: 'pending' }))).toEqual({
      type: 'task.queued',
      role: 'cfo',
      data: { task_id: 't1', attempts: 1, updated_at: '2026-11-25T20:00:00.000Z' },
    });
    for (const status of ['running', 'completed', 'failed', 'cancelled']) {
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

  it('does not carry event types without a mapping', () => {
    expect(webhookEventOf(event('CONNECTOR_INVOKED', { role: 'cfo' }))).toBeNull();
    expect(webhookEventOf(event('MODEL_VERSION_CHANGED', {}))).toBeNull();
    expect(webhookEventOf(event('WEBHOOK_DISABLED', { role: 'cfo' }))).toBeNull();
  });
});
