import fc from 'fast-check';
import {
  type GraphQLArgument,
  type GraphQLInputType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { type SeededTenant, seedTenant } from '../support/seed.js';
import { bodies, toJsonText } from './arbitraries.js';
import {
  assertProperty,
  expectSafeAnswer,
  FUZZ_SECRETS_KEY,
  fuzzTimeout,
  hasErrors,
  sendGraphql,
} from './harness.js';

let t: TestApp;
let seeded: SeededTenant;

beforeAll(async () => {
  t = await createTestApp({ env: { CONNECTOR_SECRETS_KEY: FUZZ_SECRETS_KEY } });
  seeded = await seedTenant(t);
});
afterAll(() => t.close());

/** Plausible values by argument or field name, so that damaged inputs reach the rules behind the first checks. */
function plausibleString(name: string): fc.Arbitrary<string> {
  const byName: Record<string, string[]> = {
    role: ['ceo', 'cfo', 'CTO', 'janitor'],
    baseModel: [seeded.baseModel, 'other-model'],
    processId: [seeded.processId, 'proc-2'],
    candidateId: [seeded.candidateId],
    subjectId: ['subject-1', 'subject-2'],
    baseUrl: ['https://api.example.com/v1', 'http://127.0.0.1'],
    authType: ['bearer', 'none', 'oauth2_client_credentials'],
    method: ['GET', 'POST'],
    path: ['/items', '/../etc'],
    currency: ['USD', 'EUR', 'usd'],
    provider: ['openai', 'self_hosted'],
    trainingDataHash: ['sha256:abc'],
    mimeType: ['image/png', 'application/pdf'],
    data: ['iVBORw0KGgoAAAAA'],
    filename: ['plan.png', 'a.pdf.exe'],
    location: ['Berlin, Germany', 'San Francisco, CA', 'Atlantis'],
    after: [],
  };
  const known = byName[name];
  return known && known.length > 0
    ? fc.oneof(fc.constantFrom(...known), fc.string({ maxLength: 20 }))
    : fc.string({ maxLength: 20 });
}

function seededIds(): string[] {
  return [
    seeded.tenantId,
    seeded.threadId,
    seeded.runningTaskId,
    seeded.completedTaskId,
    seeded.recommendationId,
    seeded.connectorId,
    seeded.abTestId,
    ...seeded.variantIds,
    ...seeded.modelVersionIds,
  ];
}

/** A value of the argument's type, mostly well formed, that names the seeded objects. */
function plausible(type: GraphQLInputType, name: string): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return plausible(type.ofType, name);
  // A valid wait holds the claim for up to that many seconds (test/schema/agents-claim-wait.test.ts covers
  // it): here, no wait or one out of range.
  if (name === 'waitSeconds')
    return fc.oneof(fc.constantFrom(0, null), fc.integer({ min: 31, max: 1000 }), fc.integer({ max: -1 }));
  if (isListType(type)) return fc.array(plausible(type.ofType, name), { maxLength: 3 });
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((value) => value.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return fc.record(
      Object.fromEntries(fields.map((field) => [field.name, plausible(field.type, field.name)])),
      {
        requiredKeys: fields.filter((field) => isNonNullType(field.type)).map((field) => field.name),
      },
    );
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'ID':
        return fc.oneof(fc.constantFrom(...seededIds()), fc.uuid());
      case 'String':
        return plausibleString(name);
      case 'Int':
        return fc.integer({ min: 0, max: 1000 });
      case 'SafeInt':
        return fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.maxSafeNat());
      case 'Float':
        return fc.double({ min: 0, max: 1e6, noNaN: true });
      case 'Boolean':
        return fc.boolean();
      case 'JSON':
        return fc.jsonValue({ maxDepth: 3 });
      case 'DateTime':
        return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
      case 'File':
        // Only a multipart request's file part is a file: any JSON value here must be refused.
        return fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
    }
  }
  throw new Error(`no generator for the input type ${String(type)} of ${name}: add one`);
}

function variablesOf(args: readonly GraphQLArgument[]): fc.Arbitrary<unknown> {
  return fc.record(Object.fromEntries(args.map((arg) => [arg.name, plausible(arg.type, arg.name)])), {
    requiredKeys: args.filter((arg) => isNonNullType(arg.type)).map((arg) => arg.name),
  });
}

const mutations = Object.values(schema.getMutationType()?.getFields() ?? {});

const callers = fc.oneof(
  { weight: 4, arbitrary: fc.constant('all' as const) },
  { weight: 1, arbitrary: fc.constantFrom('chairman', 'operator', 'member', 'agent') },
);

describe('every GraphQL mutation, with damaged variables', () => {
  it('finds the mutations of the schema', () => {
    expect(mutations.map((field) => field.name)).toContain('createConnector');
  });

  for (const field of mutations) {
    const definitions = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
    const call = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
    const query = `mutation Fuzz${definitions ? `(${definitions})` : ''} { ${field.name}${call ? `(${call})` : ''} { __typename } }`;

    it(
      `${field.name}: never an unexpected error, a refusal changes no row`,
      async () => {
        await assertProperty([callers, bodies(variablesOf(field.args))], async (caller, variables) => {
          await expectSafeAnswer(
            t,
            () =>
              sendGraphql(
                t,
                query,
                variables === undefined ? 'null' : toJsonText(variables),
                seeded.callers[caller],
              ),
            (answer) => answer.status >= 400 || hasErrors(answer.body),
          );
        });
      },
      fuzzTimeout,
    );
  }
});

describe('A/B weights', () => {
  const Create = `mutation($input: CreateAbTestInput!) { createAbTest(input: $input) { id } }`;
  const Start = 'mutation($id: ID!) { startAbTest(id: $id) { id } }';
  const Events = `mutation($id: ID!, $events: [AbTestEventInput!]!) { recordAbTestEvents(testId: $id, events: $events) { received } }`;
  const weight = fc.oneof(
    fc.double({ min: 1e-300, max: 1e308, noNaN: true }),
    fc.constantFrom(1e308, Number.MAX_VALUE, 5e-324),
  );

  it(
    'answers the results of a test with any accepted weights, after subjects were assigned',
    async () => {
      await assertProperty([fc.array(weight, { minLength: 2, maxLength: 4 })], async (weights) => {
        const { operator } = seeded.callers;
        const variants = weights.map((value, index) => ({ name: `v${index}`, weight: value }));
        const created = await t.graphql(Create, { input: { name: 'weights', variants } }, operator);
        const id = (created.data as { createAbTest: { id: string } } | null)?.createAbTest.id;
        if (!id) return; // refused weights: the mutation property checks refusals
        await t.graphql(Start, { id }, operator);
        const events = Array.from({ length: 20 }, (_, index) => ({
          subjectId: `s${index}`,
          converted: index % 3 === 0,
        }));
        await t.graphql(Events, { id, events }, operator);
        await expectSafeAnswer(
          t,
          async () => {
            const answer = await t.rest('GET', `/api/v1/ux/ab-tests/${id}/results`, { caller: operator });
            return { status: answer.status, body: answer.body };
          },
          (answer) => answer.status >= 400,
        );
      });
    },
    fuzzTimeout,
  );
});

describe('token sums', () => {
  const Register = 'mutation($role: String!) { registerAgentRole(input: { role: $role }) { role } }';
  const Chat =
    'mutation($role: String!) { sendChatMessage(role: $role, input: { message: "work" }) { taskId } }';
  const Claim = 'mutation($role: String!) { claimTask(role: $role) { id } }';
  const Complete = `mutation($id: ID!, $input: CompleteTaskInput!) { completeTask(id: $id, input: $input) { id } }`;
  let runs = 0;

  it(
    'reads vitals after completions whose token counts sum past 2^31',
    async () => {
      await assertProperty(
        [fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { minLength: 1, maxLength: 3 })],
        async (tokens) => {
          // A role of its own per run, so that one run's sums do not carry into the next.
          runs += 1;
          const role = `sums-${runs}`;
          const { operator, member, agent } = seeded.callers;
          await t.graphql(Register, { role }, operator);
          for (const tokensUsed of tokens) {
            await t.graphql(Chat, { role }, member);
            const claimed = await t.graphql(Claim, { role }, agent);
            const id = (claimed.data as { claimTask: { id: string } }).claimTask.id;
            await t.graphql(Complete, { id, input: { tokensUsed, costUsd: 0 } }, agent);
          }
          await expectSafeAnswer(
            t,
            async () => {
              const answer = await t.rest('GET', `/api/v1/agents/${role}/vitals`, { caller: member });
              return { status: answer.status, body: answer.body };
            },
            (answer) => answer.status >= 400,
          );
        },
      );
    },
    fuzzTimeout,
  );
});
