import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ResponseOverrides, responseSchemaOf } from '../../rest/response-schema.js';

const schema = buildSchema(`
  scalar DateTime
  scalar JSON
  enum Phase { draft running }
  type Interval { lower: Float! upper: Float! }
  type Variant { variantId: ID! name: String ci: Interval tags: [String!]! }
  type Run {
    runId: ID!
    phase: Phase!
    count: Int!
    rate: Float
    done: Boolean!
    startedAt: DateTime
    settings: JSON
    variants: [Variant!]!
  }
  type Kept { id: ID! keptStatus: String! }
  union Outcome = Run | Kept
  type Query { run(id: ID!): Run  outcome: Outcome! }
`);

const of = (source: string, overrides: ResponseOverrides = {}, on?: string) =>
  z.toJSONSchema(responseSchemaOf(parse(source), overrides, { schema, ...(on ? { on } : {}) }));

describe('responseSchemaOf', () => {
  it('maps each scalar, enum, list and nullable field of the selection, keyed and ordered by its aliases', () => {
    const derived = responseSchemaOf(
      parse(`query Run { run(id: "1") {
        run_id: runId phase count rate done started_at: startedAt settings
        variants { variant_id: variantId name ci { lower upper } tags }
      } }`),
      {},
      { schema },
    );
    const expected = z.object({
      run_id: z.string(),
      phase: z.enum(['draft', 'running']),
      count: z.int(),
      rate: z.number().nullable(),
      done: z.boolean(),
      started_at: z.iso.datetime().nullable(),
      settings: z.unknown(),
      variants: z.array(
        z.object({
          variant_id: z.string(),
          name: z.string().nullable(),
          ci: z.object({ lower: z.number(), upper: z.number() }).nullable(),
          tags: z.array(z.string()),
        }),
      ),
    });
    expect(JSON.stringify(z.toJSONSchema(derived))).toBe(JSON.stringify(z.toJSONSchema(expected)));
  });

  it('merges named and inline fragments where they stand', () => {
    const json = of(`
      query Run { run(id: "1") { run_id: runId ...Counts ... on Run { done } } }
      fragment Counts on Run { count rate }
    `);
    expect(Object.keys(json.properties ?? {})).toEqual(['run_id', 'count', 'rate', 'done']);
  });

  it('applies a format to a field’s scalar, keeping its nullability and list, and lets a zod schema stand for a field', () => {
    const derived = responseSchemaOf(
      parse(`query Run { run(id: "1") { runId phase variants { variantId } startedAt } }`),
      { runId: 'uuid', 'variants.variantId': 'uuid', phase: z.literal('running'), startedAt: 'date-time' },
      { schema },
    );
    expect(JSON.stringify(z.toJSONSchema(derived))).toBe(
      JSON.stringify(
        z.toJSONSchema(
          z.object({
            runId: z.uuid(),
            phase: z.literal('running'),
            variants: z.array(z.object({ variantId: z.uuid() })),
            startedAt: z.iso.datetime().nullable(),
          }),
        ),
      ),
    );
  });

  it('derives one member of a union, named by `on`, with its __typename', () => {
    const source = `query Outcome { outcome { __typename ... on Run { run_id: runId } ... on Kept { id status: keptStatus } } }`;
    expect(of(source, {}, 'Kept').properties).toEqual({
      __typename: { type: 'string', const: 'Kept' },
      id: { type: 'string' },
      status: { type: 'string' },
    });
    expect(() => of(source)).toThrow(/Outcome; name one of its types as `on`/);
  });

  it('refuses an override that names no selected field', () => {
    expect(() => of(`query Run { run(id: "1") { runId } }`, { run_id: 'uuid' })).toThrow(
      /overrides name no selected field: run_id/,
    );
  });
});
