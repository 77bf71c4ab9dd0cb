import { describe, expect, it } from 'vitest';
import type { OnboardingInput } from '../../src/generated/graphql/graphql.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';

const PrepareOnboardingForTest = graphql(`
  mutation PrepareOnboardingForTest($processId: String!, $candidateId: String!, $input: OnboardingInput!) {
    prepareOnboarding(processId: $processId, candidateId: $candidateId, input: $input) {
      id
      processId
      candidateId
      generation
      candidateName
      location
      offerLetter
      checklist
      complianceReminders
      jurisdiction
      createdAt
      requestId
      history {
        generation
      }
    }
  }
`);

const OnboardingPacketForTest = graphql(`
  query OnboardingPacketForTest($processId: String!, $candidateId: String!) {
    onboardingPacket(processId: $processId, candidateId: $candidateId) {
      id
      generation
      location
      offerLetter
      jurisdiction
      history {
        id
        generation
        location
        offerLetter
        complianceReminders
        history {
          generation
        }
      }
    }
  }
`);

let t: TestApp;
let operator: Caller;
let nextId = 0;

withTestAppAndCaller(['operator'], (made) => ({ t, caller: operator } = made));

function onboardingInput(overrides: Partial<OnboardingInput> = {}): OnboardingInput {
  return {
    jobDesignData: { company: { name: 'Acme Robotics', cost_center: 'CC-9' }, title: 'Data Engineer' },
    candidateName: 'Ada Lovelace',
    salary: { minAmount: 60000, maxAmount: 70000, basis: 'annual', currency: 'GBP' },
    location: 'Manchester, England',
    ...overrides,
  };
}

function candidate() {
  nextId += 1;
  return { processId: `proc-${nextId}`, candidateId: `cand-${nextId}` };
}

function prepare(
  ids: { processId: string; candidateId: string },
  input = onboardingInput(),
  caller = operator,
) {
  return t.graphql(PrepareOnboardingForTest, { ...ids, input }, caller);
}

describe('prepareOnboarding', () => {
  it('stores the first packet of a candidate as generation 1 with no history', async () => {
    const ids = candidate();
    const result = await prepare(ids);
    expect(result.errors).toBeUndefined();
    expect(result.data?.prepareOnboarding).toMatchObject({
      ...ids,
      generation: 1,
      candidateName: 'Ada Lovelace',
      location: 'Manchester, England',
      jurisdiction: { resolved: true, country: 'GB', subdivision: 'GB-ENG' },
      requestId: expect.any(String),
      history: [],
    });
    expect(result.data?.prepareOnboarding.offerLetter).toContain('On behalf of Acme Robotics');
    expect(result.data?.prepareOnboarding.offerLetter).not.toContain('CC-9');
  });

  it('numbers a second generation 2 and keeps the first as history', async () => {
    const ids = candidate();
    await prepare(ids);
    const second = await prepare(ids, onboardingInput({ location: 'Berlin, Germany' }));
    expect(second.data?.prepareOnboarding.generation).toBe(2);
    expect(second.data?.prepareOnboarding.history).toEqual([{ generation: 1 }]);
  });

  it('gives concurrent generations for one candidate distinct numbers', async () => {
    const ids = candidate();
    const results = await Promise.all([prepare(ids), prepare(ids), prepare(ids)]);
    expect(results.map((result) => result.errors)).toEqual([undefined, undefined, undefined]);
    expect(results.map((result) => result.data?.prepareOnboarding.generation).sort()).toEqual([1, 2, 3]);
  });

  it('numbers generations per tenant', async () => {
    const ids = candidate();
    await prepare(ids);
    const other = await t.caller(['chairman']);
    const result = await prepare(ids, onboardingInput(), other);
    expect(result.data?.prepareOnboarding.generation).toBe(1);
  });

  it('writes an audit row per generation', async () => {
    const caller = await t.caller(['operator']);
    const ids = candidate();
    const first = await prepare(ids, onboardingInput(), caller);
    const second = await prepare(ids, onboardingInput({ location: 'Toronto, ON' }), caller);
    const audits = await t.db.prisma.auditEntry.findMany({
      where: { tenantId: caller.tenantId, action: 'hiring.onboarding_packet.generate' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audits.map((audit) => [audit.targetId, audit.outcome, audit.actor])).toEqual([
      [first.data?.prepareOnboarding.id, 'generated', caller.sub],
      [second.data?.prepareOnboarding.id, 'generated', caller.sub],
    ]);
    expect(audits[1]?.details).toMatchObject({
      process_id: ids.processId,
      candidate_id: ids.candidateId,
      generation: 2,
      jurisdiction: 'CA-ON',
    });
    expect(audits[1]?.requestId).toBe(second.data?.prepareOnboarding.requestId);
  });

  it.each([['member'], ['agent']] as const)('is forbidden to a %s', async (role) => {
    const caller = await t.caller([role]);
    const result = await prepare(candidate(), onboardingInput(), caller);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await t.db.prisma.onboardingPacket.count({ where: { tenantId: caller.tenantId } })).toBe(0);
  });

  it('answers BAD_USER_INPUT located at the argument for a maximum below the minimum', async () => {
    const result = await prepare(
      candidate(),
      onboardingInput({ salary: { minAmount: 70000, maxAmount: 60000, basis: 'annual', currency: 'GBP' } }),
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ type: 'value_error', loc: ['input', 'salary', 'maxAmount'] }],
    });
  });

  it('answers BAD_USER_INPUT for job design data that is not an object', async () => {
    const result = await prepare(candidate(), onboardingInput({ jobDesignData: ['Data Engineer'] }));
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ type: 'dict_type', loc: ['input', 'jobDesignData'] }],
    });
  });
});

describe('onboardingPacket', () => {
  it('reads the latest generation with the earlier ones as history, newest first', async () => {
    const ids = candidate();
    await prepare(
      ids,
      onboardingInput({
        location: 'Austin, TX',
        salary: { minAmount: 1, maxAmount: 2, basis: 'hourly', currency: 'USD' },
      }),
    );
    await prepare(
      ids,
      onboardingInput({
        location: 'Boston, MA',
        salary: { minAmount: 1, maxAmount: 2, basis: 'hourly', currency: 'USD' },
      }),
    );
    await prepare(
      ids,
      onboardingInput({
        location: 'Paris, France',
        salary: { minAmount: 1, maxAmount: 2, basis: 'hourly', currency: 'EUR' },
      }),
    );
    const result = await t.graphql(OnboardingPacketForTest, ids, operator);
    const packet = result.data?.onboardingPacket;
    expect(packet?.generation).toBe(3);
    expect(packet?.location).toBe('Paris, France');
    expect(packet?.history.map((earlier) => [earlier.generation, earlier.location])).toEqual([
      [2, 'Boston, MA'],
      [1, 'Austin, TX'],
    ]);
    expect(packet?.history[0]?.history).toEqual([{ generation: 1 }]);
  });

  it('keeps the first generation readable as it was', async () => {
    const ids = candidate();
    const first = await prepare(
      ids,
      onboardingInput({
        location: 'Vancouver, BC',
        salary: { minAmount: 80000, maxAmount: 90000, basis: 'annual', currency: 'CAD' },
      }),
    );
    await prepare(ids, onboardingInput({ candidateName: 'Ada King' }));
    const result = await t.graphql(OnboardingPacketForTest, ids, operator);
    const earlier = result.data?.onboardingPacket?.history[0];
    expect(earlier?.id).toBe(first.data?.prepareOnboarding.id);
    expect(earlier?.offerLetter).toBe(first.data?.prepareOnboarding.offerLetter);
    expect(earlier?.complianceReminders).toEqual(first.data?.prepareOnboarding.complianceReminders);
    expect(result.data?.onboardingPacket?.offerLetter).toContain('Dear Ada King,');
  });

  it('is readable by any role of the tenant', async () => {
    const ids = candidate();
    await prepare(ids);
    const member = await t.caller(['member'], { tenantId: operator.tenantId });
    const result = await t.graphql(OnboardingPacketForTest, ids, member);
    expect(result.data?.onboardingPacket?.generation).toBe(1);
  });

  it('is null for another tenant', async () => {
    const ids = candidate();
    await prepare(ids);
    const outsider = await t.caller(['chairman']);
    const result = await t.graphql(OnboardingPacketForTest, ids, outsider);
    expect(result.errors).toBeUndefined();
    expect(result.data?.onboardingPacket).toBeNull();
  });

  it('is null for a candidate without a packet', async () => {
    const result = await t.graphql(OnboardingPacketForTest, candidate(), operator);
    expect(result.data?.onboardingPacket).toBeNull();
  });

  it('answers BAD_USER_INPUT for an id outside [A-Za-z0-9._:-]', async () => {
    const result = await t.graphql(
      OnboardingPacketForTest,
      { processId: 'proc/1', candidateId: 'cand-1' },
      operator,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ type: 'string_pattern_mismatch', loc: ['processId'] }],
    });
  });

  it('needs a token', async () => {
    const result = await t.graphql(OnboardingPacketForTest, candidate(), null);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
