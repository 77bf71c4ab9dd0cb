import { expect } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';

export const CreateAbTest = graphql(`
  mutation ExperimentsCreate($input: CreateAbTestInput!) {
    createAbTest(input: $input) {
      id
      name
      status
      alpha
      analysis
      variants {
        id
        name
        position
        isControl
        weight
        observations
        successes
      }
    }
  }
`);

export const StartAbTest = graphql(`
  mutation ExperimentsStart($id: ID!) {
    startAbTest(id: $id) {
      id
      status
      startedAt
      completedAt
    }
  }
`);

export const CompleteAbTest = graphql(`
  mutation ExperimentsComplete($id: ID!) {
    completeAbTest(id: $id) {
      id
      status
      startedAt
      completedAt
    }
  }
`);

export const RecordAbTestEvents = graphql(`
  mutation ExperimentsRecordEvents($testId: ID!, $events: [AbTestEventInput!]!) {
    recordAbTestEvents(testId: $testId, events: $events) {
      received
      newObservations
      newSuccesses
      repeats
      variantMismatches
    }
  }
`);

export interface Counts {
  observations: number;
  successes: number;
}

export interface CreatedTest {
  id: string;
  variantIds: string[];
}

/** A draft test with the given variants (default weights 1), control first. */
export type VariantSpec = number | { name: string; weight?: number }[];

export async function draftTest(
  t: TestApp,
  caller: Caller,
  variants: VariantSpec = 2,
  alpha?: number,
  analysis?: 'fixed_horizon' | 'sequential',
): Promise<CreatedTest> {
  const list =
    typeof variants === 'number'
      ? Array.from({ length: variants }, (_, i) => ({ name: `variant-${i}` }))
      : variants;
  const result = await t.graphql(
    CreateAbTest,
    { input: { name: 'Onboarding checklist', variants: list, alpha, analysis } },
    caller,
  );
  expect(result.errors).toBeUndefined();
  const test = result.data?.createAbTest;
  if (!test) throw new Error('createAbTest returned nothing');
  return { id: test.id, variantIds: test.variants.map((variant) => variant.id) };
}

export async function runningTest(
  t: TestApp,
  caller: Caller,
  variants?: VariantSpec,
  alpha?: number,
  analysis?: 'fixed_horizon' | 'sequential',
): Promise<CreatedTest> {
  const test = await draftTest(t, caller, variants, alpha, analysis);
  const started = await t.graphql(StartAbTest, { id: test.id }, caller);
  expect(started.errors).toBeUndefined();
  return test;
}

/**
 * Seeds exact per-variant counts through recordAbTestEvents, 1000 events per call, the way a bulk loader
 * would: subject k of variant i is `v<i>-<k>` and converts when k < successes.
 */
export async function seedCounts(
  t: TestApp,
  caller: Caller,
  test: CreatedTest,
  counts: readonly Counts[],
): Promise<void> {
  const events = counts.flatMap((c, i) =>
    Array.from({ length: c.observations }, (_, k) => ({
      subjectId: `v${i}-${k}`,
      variantId: test.variantIds[i],
      converted: k < c.successes,
    })),
  );
  for (let start = 0; start < events.length; start += 1000) {
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: events.slice(start, start + 1000) },
      caller,
    );
    expect(result.errors).toBeUndefined();
  }
}

export const AbTestCounts = graphql(`
  query ExperimentsResults($testId: ID!) {
    abTestResults(testId: $testId) {
      testId
      status
      significant
      chiSquaredPValue
      variants {
        variantId
        observations
        successes
      }
    }
  }
`);

/** [observations, successes] per variant, control first. */
export async function variantCounts(
  t: TestApp,
  caller: Caller,
  test: CreatedTest,
): Promise<[number, number][]> {
  const result = await t.graphql(AbTestCounts, { testId: test.id }, caller);
  return (result.data?.abTestResults.variants ?? []).map((v) => [v.observations, v.successes]);
}

/** [observations, successes] over all variants. */
export async function totalCounts(t: TestApp, caller: Caller, test: CreatedTest): Promise<[number, number]> {
  const perVariant = await variantCounts(t, caller, test);
  return [perVariant.reduce((sum, [n]) => sum + n, 0), perVariant.reduce((sum, [, s]) => sum + s, 0)];
}

type GraphQLFailure = { errors?: readonly { extensions?: Record<string, unknown> }[] };

export const codeOf = (result: GraphQLFailure) => result.errors?.[0]?.extensions?.code;
export const detailOf = (result: GraphQLFailure) => result.errors?.[0]?.extensions?.detail;
