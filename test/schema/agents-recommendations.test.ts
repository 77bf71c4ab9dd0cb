import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { AuditLog } from '../support/audit.js';
import { ClaimTask, CompleteTask, DecideRecommendation, queueTask, RecordOutcome } from './agents-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A completed task's recommendations: the first predicts an outcome, the second does not. */
async function recommendations(): Promise<{ member: Caller; predicted: string; unpredicted: string }> {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId });
  const id = await queueTask(t, member, 'cmo');
  await t.graphql(ClaimTask, { role: 'cmo' }, agent);
  const done = await t.graphql(
    CompleteTask,
    {
      id,
      input: {
        tokensUsed: 10,
        costUsd: 0.001,
        recommendations: [
          { summary: 'Launch in May', predictedOutcome: '500 sign-ups' },
          { summary: 'Hire a designer' },
        ],
      },
    },
    agent,
  );
  const [predicted, unpredicted] = (done.data?.completeTask.recommendations ?? []).map(
    (recommendation) => recommendation.id,
  );
  return { member, predicted: predicted as string, unpredicted: unpredicted as string };
}

describe('decideRecommendation', () => {
  it.each(['member', 'operator', 'chairman'] as const)('records the decision of a %s', async (role) => {
    const { member, predicted } = await recommendations();
    const caller = await t.caller([role], { tenantId: member.tenantId });

    const result = await t.graphql(DecideRecommendation, { id: predicted, accepted: true }, caller);

    expect(result.data?.decideRecommendation).toMatchObject({
      id: predicted,
      accepted: true,
      decidedBy: caller.sub,
    });
    expect(result.data?.decideRecommendation.decidedAt).not.toBeNull();
  });

  it('answers FORBIDDEN to an agent', async () => {
    const { member, predicted } = await recommendations();
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });

    const result = await t.graphql(DecideRecommendation, { id: predicted, accepted: true }, agent);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('keeps the first decision time when the same decision is repeated', async () => {
    const { member, predicted } = await recommendations();
    const first = await t.graphql(DecideRecommendation, { id: predicted, accepted: false }, member);

    const again = await t.graphql(DecideRecommendation, { id: predicted, accepted: false }, member);

    expect(again.data?.decideRecommendation.decidedAt).toBe(first.data?.decideRecommendation.decidedAt);
  });

  it('replaces a decision with a different one', async () => {
    const { member, predicted } = await recommendations();
    await t.graphql(DecideRecommendation, { id: predicted, accepted: false }, member);

    const changed = await t.graphql(DecideRecommendation, { id: predicted, accepted: true }, member);

    expect(changed.data?.decideRecommendation.accepted).toBe(true);
  });

  it('writes an audit row', async () => {
    const { member, predicted } = await recommendations();
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    await t.graphql(DecideRecommendation, { id: predicted, accepted: true }, chairman);

    const { data } = await t.graphql(AuditLog, { action: 'recommendation.decide' }, chairman);

    expect(data?.auditLog.nodes).toEqual([
      { action: 'recommendation.decide', targetId: predicted, outcome: 'accepted' },
    ]);
  });

  it('answers NOT_FOUND for a recommendation of another tenant', async () => {
    const { predicted } = await recommendations();
    const stranger = await t.caller(['chairman']);

    const result = await t.graphql(DecideRecommendation, { id: predicted, accepted: true }, stranger);

    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('answers BAD_USER_INPUT for an id that is not a uuid', async () => {
    const member = await t.caller(['member']);

    const result = await t.graphql(DecideRecommendation, { id: 'rec-1', accepted: true }, member);

    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ loc: ['id'], type: 'uuid_parsing' }],
    });
  });
});

describe('recordRecommendationOutcome', () => {
  it('records whether the predicted outcome matched', async () => {
    const { member, predicted } = await recommendations();

    const result = await t.graphql(RecordOutcome, { id: predicted, matched: false }, member);

    expect(result.data?.recordRecommendationOutcome).toMatchObject({ id: predicted, outcomeMatched: false });
    expect(result.data?.recordRecommendationOutcome.outcomeRecordedAt).not.toBeNull();
  });

  it('answers CONFLICT for a recommendation that predicted nothing', async () => {
    const { member, unpredicted } = await recommendations();

    const result = await t.graphql(RecordOutcome, { id: unpredicted, matched: true }, member);

    expect(result.errors?.[0]).toMatchObject({
      message: `Recommendation ${unpredicted} has no predicted outcome to evaluate`,
      extensions: { code: 'CONFLICT' },
    });
  });

  it('answers FORBIDDEN to an agent', async () => {
    const { member, predicted } = await recommendations();
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });

    const result = await t.graphql(RecordOutcome, { id: predicted, matched: true }, agent);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('answers NOT_FOUND for a recommendation of another tenant', async () => {
    const { predicted } = await recommendations();

    const result = await t.graphql(
      RecordOutcome,
      { id: predicted, matched: true },
      await t.caller(['member']),
    );

    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
