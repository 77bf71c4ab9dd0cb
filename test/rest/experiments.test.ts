import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectClose, reference } from '../domain/experiments/reference.js';
import { sequentialReference } from '../domain/experiments/sequential-reference.js';
import { CompleteAbTest, draftTest, runningTest, seedCounts } from '../schema/experiments-support.js';
import { type Caller, notAUuidAtPath, type TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';

let t: TestApp;
let operator: Caller;

withTestAppAndCaller(['operator'], (made) => ({ t, caller: operator } = made));

const results = (testId: string, caller: Caller | null = operator) =>
  t.rest('GET', `/api/v1/ux/ab-tests/${testId}/results`, { caller });

const caseNamed = (name: string) => {
  const found = reference.significance.find((c) => c.name === name);
  if (!found) throw new Error(`no reference case ${name}`);
  return found;
};

describe('GET /api/v1/ux/ab-tests/{test_id}/results', () => {
  it('answers the AbTestResults of the spec with chi_squared_p_value and the additive fields', async () => {
    const test = await runningTest(t, operator);
    await seedCounts(t, operator, test, [
      { observations: 40, successes: 10 },
      { observations: 40, successes: 20 },
    ]);
    const response = await results(test.id);
    expect(response.status).toBe(200);
    const interval = { lower: expect.any(Number), upper: expect.any(Number) };
    expect(response.body).toEqual({
      test_id: test.id,
      status: 'running',
      significant: true,
      chi_squared_p_value: expect.any(Number),
      variants: [
        {
          variant_id: test.variantIds[0],
          name: 'variant-0',
          observations: 40,
          successes: 10,
          completion_rate: 0.25,
          is_control: true,
          weight: 1,
          completion_rate_ci: interval,
          lift: null,
          sequential: null,
        },
        {
          variant_id: test.variantIds[1],
          name: 'variant-1',
          observations: 40,
          successes: 20,
          completion_rate: 0.5,
          is_control: false,
          weight: 1,
          completion_rate_ci: interval,
          lift: { lift: 1, lower: expect.any(Number), upper: expect.any(Number) },
          sequential: {
            difference: 0.25,
            always_valid_p_value: expect.any(Number),
            adjusted_p_value: expect.any(Number),
            confidence_sequence: interval,
            confidence: 0.95,
            decision: 'collecting',
          },
        },
      ],
      alpha: 0.05,
      method: 'two_proportion_z',
      statistic: expect.any(Number),
      degrees_of_freedom: 1,
      min_expected_count: 15,
      small_sample: false,
      exact_p_value: null,
      sample_ratio_mismatch: { statistic: 0, p_value: 1, alpha: 0.001, mismatch: false },
      pairwise: [
        {
          variant_id: test.variantIds[1],
          name: 'variant-1',
          p_value: expect.any(Number),
          adjusted_p_value: expect.any(Number),
          significant: true,
          small_sample: false,
          exact_p_value: null,
        },
      ],
      analysis: 'fixed_horizon',
      sequential_decision: 'collecting',
    });
  });

  it('keeps the seed fields of a sequential test, in order and value, and adds the sequential ones after them', async () => {
    const counts = [
      { observations: 1000, successes: 100 },
      { observations: 1000, successes: 140 },
    ];
    const sequential = await runningTest(t, operator, 2, undefined, 'sequential');
    const fixed = await runningTest(t, operator);
    await seedCounts(t, operator, sequential, counts);
    await seedCounts(t, operator, fixed, counts);
    const [a, b] = [await results(sequential.id), await results(fixed.id)];
    // The body as the service wrote it (the answer is JSON.stringify's), ids of each test named alike.
    const seedPart = (answer: unknown, test: { id: string; variantIds: string[] }) => {
      const text = test.variantIds.reduce(
        (all, id, i) => all.replaceAll(id, `variant-${i}`),
        JSON.stringify(answer).replaceAll(test.id, 'test'),
      );
      const { analysis: _a, sequential_decision: _d, ...body } = JSON.parse(text);
      body.variants = body.variants.map(({ sequential: _s, ...variant }: Record<string, unknown>) => variant);
      return JSON.stringify(body);
    };
    expect(seedPart(a.body, sequential)).toBe(seedPart(b.body, fixed));
    expect(Object.keys(a.body).slice(-2)).toEqual(['analysis', 'sequential_decision']);
    expect([a.body.analysis, b.body.analysis]).toEqual(['sequential', 'fixed_horizon']);
    // Read once, the z-test calls 10% against 14% significant; the sequential analysis keeps collecting.
    expect([a.body.significant, a.body.sequential_decision]).toEqual([true, 'collecting']);
  });

  it('answers each variant’s always-valid p-value and confidence sequence as SciPy', async () => {
    const c = sequentialReference.families.find((family) => family.name === 'three variants');
    if (!c) throw new Error('no reference family');
    const test = await runningTest(t, operator, c.variants.length, c.alpha, 'sequential');
    await seedCounts(t, operator, test, c.variants);
    const { body } = await results(test.id);
    expect(body.sequential_decision).toBe('significant');
    c.comparisons.forEach((expected, i) => {
      const sequential = body.variants[i + 1].sequential;
      expectClose(sequential.always_valid_p_value, expected.alwaysValidPValue);
      expectClose(sequential.adjusted_p_value, expected.adjustedPValue);
      expectClose(sequential.confidence_sequence.lower, expected.lower);
      expectClose(sequential.confidence_sequence.upper, expected.upper);
      expect(sequential.decision).toBe(expected.significant ? 'significant' : 'collecting');
    });
  });

  it('answers sequential_decision not_significant for a completed test with no difference shown', async () => {
    const test = await runningTest(t, operator, 2, undefined, 'sequential');
    await seedCounts(t, operator, test, [
      { observations: 40, successes: 8 },
      { observations: 40, successes: 9 },
    ]);
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    const { body } = await results(test.id);
    expect([body.sequential_decision, body.variants[1].sequential.decision]).toEqual([
      'not_significant',
      'not_significant',
    ]);
  });

  it.each([
    'two variants, modest difference',
    'two variants, p below 1e-20',
    'two variants, small p but expected counts below 5',
    'three variants',
    'three variants, small p but expected counts below 5',
    'four variants, p below 1e-20',
  ])('agrees with SciPy end to end for %s', async (name) => {
    const c = caseNamed(name);
    const test = await runningTest(t, operator, c.variants.length);
    await seedCounts(t, operator, test, c.variants);
    const { body } = await results(test.id);
    expect(
      body.variants.map((v: { observations: number; successes: number }) => [v.observations, v.successes]),
    ).toEqual(c.variants.map((v) => [v.observations, v.successes]));
    expectClose(body.chi_squared_p_value, c.pValue);
    expect(body.significant).toBe(c.significant);
    body.pairwise.forEach((comparison: { adjusted_p_value: number | null }, i: number) => {
      expectClose(comparison.adjusted_p_value, c.pairwise[i]?.adjustedPValue ?? null);
    });
  });

  it('decides by the z-test at 0/20 against 5/20 and warns of the small sample beside it', async () => {
    const c = caseNamed('two variants, 0/20 against 5/20: p below alpha, expected counts below 5');
    const test = await runningTest(t, operator);
    await seedCounts(t, operator, test, c.variants);
    const { body } = await results(test.id);
    expectClose(body.chi_squared_p_value, c.pValue);
    expect([body.significant, body.min_expected_count, body.small_sample]).toEqual([true, 2.5, true]);
    expectClose(body.exact_p_value, c.exactPValue);
    expect([body.pairwise[0].significant, body.pairwise[0].small_sample]).toEqual([true, true]);
  });

  it('answers chi_squared_p_value null and significant false when a variant has no observations', async () => {
    const test = await runningTest(t, operator);
    await seedCounts(t, operator, test, [
      { observations: 100, successes: 10 },
      { observations: 0, successes: 0 },
    ]);
    const { body } = await results(test.id);
    expect([body.chi_squared_p_value, body.significant, body.variants[1].completion_rate]).toEqual([
      null,
      false,
      0,
    ]);
  });

  it('answers chi_squared_p_value null and significant false when every subject converted', async () => {
    const test = await runningTest(t, operator);
    await seedCounts(t, operator, test, [
      { observations: 50, successes: 50 },
      { observations: 60, successes: 60 },
    ]);
    const { body } = await results(test.id);
    expect([body.chi_squared_p_value, body.significant]).toEqual([null, false]);
  });

  it('decides significance at the alpha of the test', async () => {
    const c = caseNamed('two variants, modest difference');
    const test = await runningTest(t, operator, 2, 0.2);
    await seedCounts(t, operator, test, c.variants);
    const { body } = await results(test.id);
    expect([body.alpha, body.significant]).toEqual([0.2, true]);
  });

  it('flags a sample-ratio mismatch when the observations do not follow the weights', async () => {
    const test = await runningTest(t, operator, [
      { name: 'control', weight: 1 },
      { name: 'treatment', weight: 3 },
    ]);
    await seedCounts(t, operator, test, [
      { observations: 500, successes: 50 },
      { observations: 500, successes: 60 },
    ]);
    const { body } = await results(test.id);
    expect(body.sample_ratio_mismatch.mismatch).toBe(true);
  });

  it('answers a draft test with zero counts and no p-value', async () => {
    const test = await draftTest(t, operator, 3);
    const { status, body } = await results(test.id);
    expect([status, body.status, body.chi_squared_p_value, body.significant, body.method]).toEqual([
      200,
      'draft',
      null,
      false,
      'chi_squared_homogeneity',
    ]);
  });

  it('answers the status of a completed test in lowercase', async () => {
    const test = await runningTest(t, operator);
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect((await results(test.id)).body.status).toBe('completed');
  });

  it('answers any role of the tenant', async () => {
    const test = await draftTest(t, operator);
    const statuses = [];
    for (const role of ['member', 'agent', 'chairman'] as const) {
      const caller = await t.caller([role], { tenantId: operator.tenantId });
      statuses.push((await results(test.id, caller)).status);
    }
    expect(statuses).toEqual([200, 200, 200]);
  });

  it('answers 422 uuid_parsing at ["path","test_id"] for a test_id that is not a uuid', async () => {
    const response = await results('not-a-uuid');
    expect(response.status).toBe(422);
    expect(response.body).toEqual(notAUuidAtPath('test_id'));
  });

  it('answers 404 for an unknown test', async () => {
    const response = await results(randomUUID());
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: expect.stringMatching(/not found/) });
  });

  it("answers 404 for another tenant's test", async () => {
    const test = await draftTest(t, operator);
    const stranger = await t.caller(['chairman']);
    const response = await results(test.id, stranger);
    expect(response.status).toBe(404);
  });

  it('answers 401 with WWW-Authenticate without a token', async () => {
    const response = await results(randomUUID(), null);
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([401, 'Bearer']);
  });

  it('is described in the OpenAPI document with its response schema', async () => {
    const { body } = await t.rest('GET', '/api/v1/openapi.json');
    const operation = body.paths['/api/v1/ux/ab-tests/{test_id}/results'].get;
    const schema = operation.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(
      expect.arrayContaining(['test_id', 'status', 'significant', 'chi_squared_p_value', 'variants']),
    );
  });
});
