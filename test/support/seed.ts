import { randomUUID } from 'node:crypto';
import type { Role } from '../../src/auth/viewer.js';
import type { Caller, TestApp } from './app.js';

/** A PNG signature, the smallest attachment the server accepts as image/png. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');

/** One object of every kind a tenant can own, with the callers that made them. */
export interface SeededTenant {
  tenantId: string;
  callers: Record<Role | 'all', Caller>;
  threadId: string;
  /** Claimed and still running. */
  runningTaskId: string;
  completedTaskId: string;
  recommendationId: string;
  connectorId: string;
  abTestId: string;
  variantIds: string[];
  baseModel: string;
  /** Oldest first; the last is in production. */
  modelVersionIds: string[];
  processId: string;
  candidateId: string;
}

/** Runs an operation that must succeed and returns its data. */
export async function must(
  t: TestApp,
  query: string,
  variables: Record<string, unknown>,
  caller: Caller,
): Promise<any> {
  const result = await t.graphql(query, variables, caller);
  if (result.errors?.length) throw new Error(`seeding failed: ${JSON.stringify(result.errors)}`);
  return result.data;
}

/** Creates a tenant in dogfood live mode with a thread, tasks, a recommendation, a connector, an A/B test, model versions and an onboarding packet. */
export async function seedTenant(t: TestApp, tenantId = randomUUID()): Promise<SeededTenant> {
  const make = (roles: Role[]) => t.caller(roles, { tenantId });
  const callers = {
    chairman: await make(['chairman']),
    operator: await make(['operator']),
    member: await make(['member']),
    agent: await make(['agent']),
    all: await make(['chairman', 'operator', 'member', 'agent']),
  };
  const { chairman, operator, member, agent } = callers;
  await must(t, 'mutation { setDogfoodLiveMode(enabled: true) { id } }', {}, chairman);

  const chat = `mutation($input: ChatMessageInput!) { sendChatMessage(role: "ceo", input: $input) { taskId threadId } }`;
  const first = await must(
    t,
    chat,
    {
      input: {
        message: 'Plan Q3',
        attachments: [{ data: PNG, mimeType: 'image/png', filename: 'plan.png' }],
      },
    },
    member,
  );
  await must(t, chat, { input: { message: 'And Q4', threadId: first.sendChatMessage.threadId } }, member);
  const claim = 'mutation { claimTask(role: "ceo") { id } }';
  const completedTaskId = (await must(t, claim, {}, agent)).claimTask.id;
  const completed = await must(
    t,
    `mutation($id: ID!, $input: CompleteTaskInput!) { completeTask(id: $id, input: $input) { recommendations { id } } }`,
    {
      id: completedTaskId,
      input: {
        tokensUsed: 10,
        costUsd: 0.01,
        recommendations: [{ summary: 'Hire', predictedOutcome: 'growth' }],
      },
    },
    agent,
  );
  const runningTaskId = (await must(t, claim, {}, agent)).claimTask.id;

  const connector = await t.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: { template: { name: 'Stripe', base_url: 'https://api.stripe.com/v1', auth_type: 'bearer' } },
  });
  if (connector.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(connector.body)}`);

  const abTest = await must(
    t,
    `mutation { createAbTest(input: { name: "Onboarding", variants: [{ name: "control" }, { name: "short" }] }) { id variants { id } } }`,
    {},
    operator,
  );
  await must(
    t,
    'mutation($id: ID!) { startAbTest(id: $id) { id } }',
    { id: abTest.createAbTest.id },
    operator,
  );

  const baseModel = 'support-bot';
  const modelVersionIds: string[] = [];
  for (let generation = 0; generation < 2; generation += 1) {
    const registered = await must(
      t,
      `mutation($input: RegisterModelVersionInput!) { registerModelVersion(input: $input) { id } }`,
      {
        input: {
          baseModel,
          provider: 'openai',
          trainingDataHash: `sha256:${generation}`,
          hyperparameters: { epochs: 3 },
          evaluationMetrics: { accuracy: 0.9 },
        },
      },
      operator,
    );
    modelVersionIds.push(registered.registerModelVersion.id);
    await must(
      t,
      'mutation($id: ID!) { promoteModelVersion(id: $id) { id } }',
      { id: registered.registerModelVersion.id },
      operator,
    );
  }

  const processId = 'proc-1';
  const candidateId = 'cand-1';
  await must(
    t,
    `mutation($input: OnboardingInput!) { prepareOnboarding(processId: "${processId}", candidateId: "${candidateId}", input: $input) { id } }`,
    {
      input: {
        jobDesignData: { title: 'Engineer' },
        candidateName: 'Ada Lovelace',
        salary: { minAmount: 100000, maxAmount: 120000, basis: 'annual', currency: 'USD' },
        location: 'Berlin, Germany',
      },
    },
    operator,
  );

  return {
    tenantId,
    callers,
    threadId: first.sendChatMessage.threadId,
    runningTaskId,
    completedTaskId,
    recommendationId: completed.completeTask.recommendations[0].id,
    connectorId: connector.body.id,
    abTestId: abTest.createAbTest.id,
    variantIds: abTest.createAbTest.variants.map((variant: { id: string }) => variant.id),
    baseModel,
    modelVersionIds,
    processId,
    candidateId,
  };
}
