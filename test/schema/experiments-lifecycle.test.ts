import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';
import { AuditLog } from '../support/audit.js';
import { withTestAppAndCaller } from '../support/fixtures.js';
import {
  CompleteAbTest,
  CreateAbTest,
  codeOf,
  detailOf,
  draftTest,
  RecordAbTestEvents,
  runningTest,
  StartAbTest,
} from './experiments-support.js';

const AbTest = graphql(`
  query ExperimentsAbTest($id: ID!) {
    abTest(id: $id) {
      id
      name
      status
      variants {
        id
        name
        observations
        successes
      }
    }
  }
`);

const AbTests = graphql(`
  query ExperimentsAbTests($first: Int, $after: String, $status: AbTestStatus) {
    abTests(first: $first, after: $after, status: $status) {
      nodes {
        id
        status
      }
      nextCursor
    }
  }
`);

let t: TestApp;
let operator: Caller;

withTestAppAndCaller(['operator'], (made) => ({ t, caller: operator } = made));

const inTenant = (roles: Caller['roles']) => t.caller(roles, { tenantId: operator.tenantId });

const twoVariants = [{ name: 'control' }, { name: 'treatment' }];

describe('createAbTest', () => {
  it('creates a draft fixed-horizon test with the control first, weight 1 and alpha 0.05 by default', async () => {
    const result = await t.graphql(
      CreateAbTest,
      { input: { name: 'Welcome flow', variants: twoVariants } },
      operator,
    );
    expect(result.data?.createAbTest).toEqual({
      id: expect.any(String),
      name: 'Welcome flow',
      status: 'draft',
      alpha: 0.05,
      analysis: 'fixed_horizon',
      variants: [
        {
          id: expect.any(String),
          name: 'control',
          position: 0,
          isControl: true,
          weight: 1,
          observations: 0,
          successes: 0,
        },
        {
          id: expect.any(String),
          name: 'treatment',
          position: 1,
          isControl: false,
          weight: 1,
          observations: 0,
          successes: 0,
        },
      ],
    });
  });

  it('writes an audit row', async () => {
    const caller = await t.caller(['chairman']);
    const test = await draftTest(t, caller);
    const audit = await t.graphql(AuditLog, { action: 'ab_test.create' }, caller);
    expect(audit.data?.auditLog.nodes).toEqual([
      { action: 'ab_test.create', targetId: test.id, outcome: 'created' },
    ]);
  });

  it('refuses fewer than two variants with too_short at ["input","variants"]', async () => {
    const result = await t.graphql(
      CreateAbTest,
      { input: { name: 'x', variants: [{ name: 'only' }] } },
      operator,
    );
    expect([codeOf(result), detailOf(result)]).toMatchInlineSnapshot(`
      [
        "BAD_USER_INPUT",
        [
          {
            "ctx": {
              "actual_length": 1,
              "field_type": "List",
              "min_length": 2,
            },
            "input": [
              {
                "name": "only",
              },
            ],
            "loc": [
              "input",
              "variants",
            ],
            "msg": "List should have at least 2 items after validation, not 1",
            "type": "too_short",
          },
        ],
      ]
    `);
  });

  it('refuses variant names that repeat ignoring case', async () => {
    const input = { name: 'x', variants: [{ name: 'Blue' }, { name: 'blue ' }] };
    const result = await t.graphql(CreateAbTest, { input }, operator);
    expect(detailOf(result)).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "error": "variant names must be unique ignoring case; 'blue' repeats an earlier one",
          },
          "input": "blue",
          "loc": [
            "input",
            "variants",
            1,
            "name",
          ],
          "msg": "Value error, variant names must be unique ignoring case; 'blue' repeats an earlier one",
          "type": "value_error",
        },
      ]
    `);
  });

  it('refuses a weight below 0.000001', async () => {
    const input = { name: 'x', variants: [{ name: 'a', weight: 0 }, { name: 'b' }] };
    const result = await t.graphql(CreateAbTest, { input }, operator);
    expect(detailOf(result)).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "ge": 0.000001,
          },
          "input": 0,
          "loc": [
            "input",
            "variants",
            0,
            "weight",
          ],
          "msg": "Input should be greater than or equal to 0.000001",
          "type": "greater_than_equal",
        },
      ]
    `);
  });

  it.each([
    [0, 'greater_than'],
    [-0.5, 'greater_than'],
    [1, 'less_than'],
    [1.5, 'less_than'],
  ])('refuses alpha %s outside (0, 1) with %s', async (alpha, type) => {
    const result = await t.graphql(
      CreateAbTest,
      { input: { name: 'x', variants: twoVariants, alpha } },
      operator,
    );
    expect(detailOf(result)).toMatchObject([{ type, loc: ['input', 'alpha'], input: alpha }]);
  });

  it('stores nothing after a refused input', async () => {
    const caller = await t.caller(['operator']);
    await t.graphql(CreateAbTest, { input: { name: '', variants: twoVariants } }, caller);
    const list = await t.graphql(AbTests, {}, caller);
    expect(list.data?.abTests.nodes).toEqual([]);
  });

  it.each([['member'], ['agent']] as const)('is forbidden to the %s role', async (role) => {
    const caller = await inTenant([role]);
    const result = await t.graphql(CreateAbTest, { input: { name: 'x', variants: twoVariants } }, caller);
    expect(codeOf(result)).toBe('FORBIDDEN');
  });
});

describe('startAbTest and completeAbTest', () => {
  it('moves a test draft → running → completed with timestamps', async () => {
    const test = await draftTest(t, operator);
    const started = await t.graphql(StartAbTest, { id: test.id }, operator);
    const completed = await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect([started.data?.startAbTest.status, completed.data?.completeAbTest.status]).toEqual([
      'running',
      'completed',
    ]);
    expect(completed.data?.completeAbTest.startedAt).toBeTruthy();
    expect(completed.data?.completeAbTest.completedAt).toBeTruthy();
  });

  it('answers a repeated start with the running test unchanged', async () => {
    const test = await runningTest(t, operator);
    const first = await t.graphql(AbTest, { id: test.id }, operator);
    const again = await t.graphql(StartAbTest, { id: test.id }, operator);
    expect([again.data?.startAbTest.status, first.data?.abTest.status]).toEqual(['running', 'running']);
  });

  it('answers a repeated completion with the completed test unchanged', async () => {
    const test = await runningTest(t, operator);
    const first = await t.graphql(CompleteAbTest, { id: test.id }, operator);
    const again = await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect(again.data?.completeAbTest).toEqual(first.data?.completeAbTest);
  });

  it('refuses to restart a completed test with CONFLICT', async () => {
    const test = await runningTest(t, operator);
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect(codeOf(await t.graphql(StartAbTest, { id: test.id }, operator))).toBe('CONFLICT');
  });

  it('refuses to complete a draft test with CONFLICT', async () => {
    const test = await draftTest(t, operator);
    const result = await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect([codeOf(result), result.errors?.[0]?.message]).toEqual([
      'CONFLICT',
      `A/B test ${test.id} is draft; only a running test can be moved to completed`,
    ]);
  });

  it('allows the chairman', async () => {
    const chairman = await inTenant(['chairman']);
    const test = await draftTest(t, operator);
    expect((await t.graphql(StartAbTest, { id: test.id }, chairman)).data?.startAbTest.status).toBe(
      'running',
    );
  });

  it.each([['member'], ['agent']] as const)('is forbidden to the %s role', async (role) => {
    const caller = await inTenant([role]);
    const test = await draftTest(t, operator);
    expect(codeOf(await t.graphql(StartAbTest, { id: test.id }, caller))).toBe('FORBIDDEN');
  });

  it("answers NOT_FOUND for another tenant's test", async () => {
    const test = await draftTest(t, operator);
    const stranger = await t.caller(['operator']);
    expect(codeOf(await t.graphql(StartAbTest, { id: test.id }, stranger))).toBe('NOT_FOUND');
  });
});

describe('abTest and abTests', () => {
  it('reads a test with its live counters for any role of the tenant', async () => {
    const test = await runningTest(t, operator);
    await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's', variantId: test.variantIds[1], converted: true }] },
      operator,
    );
    const member = await inTenant(['member']);
    const result = await t.graphql(AbTest, { id: test.id }, member);
    expect(result.data?.abTest.variants.map((v) => [v.observations, v.successes])).toEqual([
      [0, 0],
      [1, 1],
    ]);
  });

  it("answers NOT_FOUND for another tenant's test", async () => {
    const test = await draftTest(t, operator);
    const stranger = await t.caller(['chairman']);
    expect(codeOf(await t.graphql(AbTest, { id: test.id }, stranger))).toBe('NOT_FOUND');
  });

  it('lists the tenant’s tests newest first, page by page, filtered by status', async () => {
    const caller = await t.caller(['operator']);
    const first = await draftTest(t, caller);
    const second = await runningTest(t, caller);
    const third = await draftTest(t, caller);
    const page1 = await t.graphql(AbTests, { first: 2 }, caller);
    const page2 = await t.graphql(AbTests, { first: 2, after: page1.data?.abTests.nextCursor }, caller);
    const drafts = await t.graphql(AbTests, { status: 'draft' }, caller);
    expect(
      [...(page1.data?.abTests.nodes ?? []), ...(page2.data?.abTests.nodes ?? [])].map((n) => n.id),
    ).toEqual([third.id, second.id, first.id]);
    expect(page2.data?.abTests.nextCursor).toBeNull();
    expect(drafts.data?.abTests.nodes.map((n) => n.id)).toEqual([third.id, first.id]);
  });

  it('answers UNAUTHENTICATED without a token', async () => {
    expect(codeOf(await t.graphql(AbTests, {}, null))).toBe('UNAUTHENTICATED');
  });

  it('answers NOT_FOUND for an unknown test', async () => {
    expect(codeOf(await t.graphql(AbTest, { id: randomUUID() }, operator))).toBe('NOT_FOUND');
  });
});
