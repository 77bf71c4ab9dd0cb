import { randomBytes, randomUUID } from 'node:crypto';
import {
  type GraphQLField,
  type GraphQLInputType,
  getNamedType,
  isInputObjectType,
  isScalarType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/auth/viewer.js';
import { schema } from '../../src/schema/index.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { type SeededTenant, seedTenant } from '../support/seed.js';

/** Arguments that name a tenant-owned object without being of type ID. */
const ID_LIKE_NAMES = new Set(['baseModel', 'processId', 'candidateId']);

function takesIdLike(type: GraphQLInputType, name: string, seen = new Set<string>()): boolean {
  const named = getNamedType(type);
  if (isScalarType(named)) return named.name === 'ID' || ID_LIKE_NAMES.has(name);
  if (!isInputObjectType(named) || seen.has(named.name)) return false;
  seen.add(named.name);
  return Object.values(named.getFields()).some((field) => takesIdLike(field.type, field.name, seen));
}

/** Every query and mutation with an id-like argument, also inside its input objects. */
function fieldsWithIdArguments(): string[] {
  const roots = [schema.getQueryType(), schema.getMutationType()];
  return roots.flatMap((root) =>
    Object.values(root?.getFields() ?? {})
      .filter((field: GraphQLField<unknown, unknown>) =>
        field.args.some((arg) => takesIdLike(arg.type, arg.name)),
      )
      .map((field) => `${root?.name}.${field.name}`),
  );
}

/** The ids a case needs: tenant A's objects, or ids that name nothing. */
interface Target {
  tenantId: string;
  abTestId: string;
  variantId: string;
  connectorId: string;
  taskId: string;
  threadId: string;
  recommendationId: string;
  modelVersionId: string;
  baseModel: string;
  processId: string;
  candidateId: string;
  approvalId: string;
  taskApprovalId: string;
  webhookId: string;
  deliveryId: string;
  routineId: string;
}

interface Case {
  /** Roles allowed to call it at all; any other role is refused for every id alike. */
  roles: Role[];
  query: string;
  variables(target: Target): Record<string, unknown>;
  /** Mutations keyed by a name create the caller's own object instead of answering not found. */
  createsOwn?: boolean;
}

const everyone: Role[] = ['chairman', 'operator', 'member', 'agent'];
const managers: Role[] = ['chairman', 'operator'];
const experimenters: Role[] = ['chairman', 'operator', 'agent'];
const deciders: Role[] = ['chairman', 'operator', 'member'];
const callers: Role[] = ['operator', 'agent'];
const inboxReaders: Role[] = ['chairman', 'operator', 'agent'];

const connectorInput = { template: { name: 'Probe', baseUrl: 'https://api.example.com', authType: 'none' } };

const cases: Record<string, Case> = {
  'Query.abTest': {
    roles: everyone,
    query: 'query($id: ID!) { abTest(id: $id) { id name } }',
    variables: (target) => ({ id: target.abTestId }),
  },
  'Query.abTestResults': {
    roles: everyone,
    query: 'query($id: ID!) { abTestResults(testId: $id) { testId variants { name observations } } }',
    variables: (target) => ({ id: target.abTestId }),
  },
  'Query.connector': {
    roles: everyone,
    query: 'query($id: ID!) { connector(id: $id) { id name template } }',
    variables: (target) => ({ id: target.connectorId }),
  },
  'Query.task': {
    roles: everyone,
    query: 'query($id: ID!) { task(id: $id) { id message output } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Query.thread': {
    roles: everyone,
    query: 'query($id: ID!) { thread(id: $id) { id messages { body } } }',
    variables: (target) => ({ id: target.threadId }),
  },
  'Query.tasks': {
    roles: everyone,
    // A list: another tenant's thread gives an empty page, as an id of nothing does.
    createsOwn: true,
    query: 'query($threadId: ID!) { tasks(threadId: $threadId) { nodes { id message } } }',
    variables: (target) => ({ threadId: target.threadId }),
  },
  'Query.modelVersions': {
    roles: everyone,
    query: 'query($baseModel: String!) { modelVersions(baseModel: $baseModel) { id tenantId } }',
    variables: (target) => ({ baseModel: target.baseModel }),
  },
  'Query.productionModel': {
    roles: everyone,
    query: 'query($baseModel: String!) { productionModel(baseModel: $baseModel) { id tenantId } }',
    variables: (target) => ({ baseModel: target.baseModel }),
  },
  'Query.onboardingPacket': {
    roles: everyone,
    query: `query($processId: String!, $candidateId: String!) {
      onboardingPacket(processId: $processId, candidateId: $candidateId) { id candidateName offerLetter }
    }`,
    variables: (target) => ({ processId: target.processId, candidateId: target.candidateId }),
  },
  'Mutation.assignAbTestVariant': {
    roles: experimenters,
    query:
      'mutation($id: ID!) { assignAbTestVariant(testId: $id, subjectId: "s-1") { variantId variantName } }',
    variables: (target) => ({ id: target.abTestId }),
  },
  'Mutation.recordAbTestConversion': {
    roles: experimenters,
    query:
      'mutation($id: ID!) { recordAbTestConversion(testId: $id, subjectId: "s-1") { variantId variantName } }',
    variables: (target) => ({ id: target.abTestId }),
  },
  'Mutation.recordAbTestEvents': {
    roles: experimenters,
    query: `mutation($id: ID!, $variantId: ID!) {
      recordAbTestEvents(testId: $id, events: [{ subjectId: "s-1", variantId: $variantId, converted: true }]) { received }
    }`,
    variables: (target) => ({ id: target.abTestId, variantId: target.variantId }),
  },
  'Mutation.startAbTest': {
    roles: managers,
    query: 'mutation($id: ID!) { startAbTest(id: $id) { id status } }',
    variables: (target) => ({ id: target.abTestId }),
  },
  'Mutation.completeAbTest': {
    roles: managers,
    query: 'mutation($id: ID!) { completeAbTest(id: $id) { id status } }',
    variables: (target) => ({ id: target.abTestId }),
  },
  'Mutation.completeTask': {
    roles: ['agent'],
    query: `mutation($id: ID!) { completeTask(id: $id, input: { tokensUsed: 1, costUsd: 0, output: "x" }) { id message } }`,
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.failTask': {
    roles: ['agent'],
    query: 'mutation($id: ID!) { failTask(id: $id, error: "x") { id message } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.decideRecommendation': {
    roles: deciders,
    query: 'mutation($id: ID!) { decideRecommendation(id: $id, accepted: true) { id summary } }',
    variables: (target) => ({ id: target.recommendationId }),
  },
  'Mutation.recordRecommendationOutcome': {
    roles: deciders,
    query: 'mutation($id: ID!) { recordRecommendationOutcome(id: $id, matched: true) { id summary } }',
    variables: (target) => ({ id: target.recommendationId }),
  },
  'Mutation.sendChatMessage': {
    roles: everyone,
    query: `mutation($threadId: ID!) {
      sendChatMessage(role: "ceo", input: { message: "hello", threadId: $threadId }) { taskId threadId }
    }`,
    variables: (target) => ({ threadId: target.threadId }),
  },
  'Mutation.updateConnector': {
    roles: managers,
    query:
      'mutation($id: ID!, $input: ConnectorInput!) { updateConnector(id: $id, input: $input) { id version } }',
    variables: (target) => ({ id: target.connectorId, input: connectorInput }),
  },
  'Mutation.setConnectorCredential': {
    roles: managers,
    query: `mutation($id: ID!) {
      setConnectorCredential(id: $id, input: { bearer: { token: "probe-token" } }) { id }
    }`,
    variables: (target) => ({ id: target.connectorId }),
  },
  'Mutation.clearConnectorCredential': {
    roles: managers,
    query: 'mutation($id: ID!) { clearConnectorCredential(id: $id) { id } }',
    variables: (target) => ({ id: target.connectorId }),
  },
  'Mutation.invokeConnector': {
    roles: callers,
    query: `mutation($id: ID!) {
      invokeConnector(id: $id, endpoint: { method: "GET", path: "/customers" }) { ... on ConnectorInvocation { status } }
    }`,
    variables: (target) => ({ id: target.connectorId }),
  },
  'Mutation.testConnector': {
    roles: callers,
    query: 'mutation($id: ID!) { testConnector(id: $id) { status } }',
    variables: (target) => ({ id: target.connectorId }),
  },
  'Mutation.setConnectorApprovalPolicy': {
    roles: ['chairman'],
    query: `mutation($id: ID!) {
      setConnectorApprovalPolicy(id: $id, policy: { rules: [{ methods: ["DELETE"] }] }) { id version }
    }`,
    variables: (target) => ({ id: target.connectorId }),
  },
  'Query.connectorCallApprovals': {
    roles: inboxReaders,
    // A list: another tenant's connector gives an empty page, as an id of nothing does.
    createsOwn: true,
    query: 'query($id: ID!) { connectorCallApprovals(connectorId: $id) { nodes { id input } } }',
    variables: (target) => ({ id: target.connectorId }),
  },
  'Query.connectorCallApproval': {
    roles: inboxReaders,
    query: 'query($id: ID!) { connectorCallApproval(id: $id) { id status input } }',
    variables: (target) => ({ id: target.approvalId }),
  },
  'Mutation.approveConnectorCall': {
    roles: managers,
    query: 'mutation($id: ID!) { approveConnectorCall(id: $id) { id status } }',
    variables: (target) => ({ id: target.approvalId }),
  },
  'Mutation.rejectConnectorCall': {
    roles: managers,
    query: 'mutation($id: ID!) { rejectConnectorCall(id: $id, note: "probe") { id status } }',
    variables: (target) => ({ id: target.approvalId }),
  },
  'Mutation.requestConnectorCallChanges': {
    roles: managers,
    query: 'mutation($id: ID!) { requestConnectorCallChanges(id: $id) { id status } }',
    variables: (target) => ({ id: target.approvalId }),
  },
  'Query.webhook': {
    roles: managers,
    query: 'query($id: ID!) { webhook(id: $id) { id url status } }',
    variables: (target) => ({ id: target.webhookId }),
  },
  'Query.webhookDeliveries': {
    roles: managers,
    query: 'query($id: ID!) { webhookDeliveries(webhookId: $id) { nodes { id eventType } } }',
    variables: (target) => ({ id: target.webhookId }),
  },
  'Query.webhookDelivery': {
    roles: managers,
    query: 'query($id: ID!) { webhookDelivery(id: $id) { id eventType status } }',
    variables: (target) => ({ id: target.deliveryId }),
  },
  'Mutation.rotateWebhookSecret': {
    roles: managers,
    query: 'mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret } }',
    variables: (target) => ({ id: target.webhookId }),
  },
  'Mutation.disableWebhook': {
    roles: managers,
    query: 'mutation($id: ID!) { disableWebhook(id: $id) { id status } }',
    variables: (target) => ({ id: target.webhookId }),
  },
  'Mutation.enableWebhook': {
    roles: managers,
    query: 'mutation($id: ID!) { enableWebhook(id: $id) { id status } }',
    variables: (target) => ({ id: target.webhookId }),
  },
  'Mutation.redeliverWebhookDelivery': {
    roles: managers,
    query: 'mutation($id: ID!) { redeliverWebhookDelivery(id: $id) { id status } }',
    variables: (target) => ({ id: target.deliveryId }),
  },
  'Mutation.releaseTask': {
    roles: ['agent'],
    query: 'mutation($id: ID!) { releaseTask(id: $id) { id message status } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.renewTaskLease': {
    roles: ['agent'],
    query: 'mutation($id: ID!) { renewTaskLease(id: $id) { id message leaseExpiresAt } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.delegateTask': {
    roles: ['agent'],
    query: `mutation($id: ID!) {
      delegateTask(taskId: $id, input: { delegations: [{ role: "cfo", message: "probe" }], tokensUsed: 0, costUsd: 0 }) {
        parent { id message } children { id }
      }
    }`,
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.cancelTask': {
    roles: everyone,
    query: 'mutation($id: ID!) { cancelTask(id: $id, reason: "probe") { id message status } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.acceptTask': {
    roles: everyone,
    query: 'mutation($id: ID!) { acceptTask(id: $id, note: "probe") { id message status } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.rejectTask': {
    roles: everyone,
    query: 'mutation($id: ID!) { rejectTask(id: $id, reason: "probe") { id message status } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.deleteTask': {
    roles: managers,
    query: 'mutation($id: ID!) { deleteTask(id: $id) { ids } }',
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.reportTaskSteps': {
    roles: ['agent'],
    query: `mutation($id: ID!) {
      reportTaskSteps(taskId: $id, steps: [{ model: "m", inputTokens: 1, outputTokens: 1, costUsd: 0, durationMs: 1 }]) {
        taskId recorded
      }
    }`,
    variables: (target) => ({ id: target.taskId }),
  },
  'Mutation.requestTaskApproval': {
    roles: ['agent'],
    query: `mutation($id: ID!) {
      requestTaskApproval(taskId: $id, input: { summary: "probe", payload: { probe: true } }) { id status }
    }`,
    variables: (target) => ({ id: target.taskId }),
  },
  'Query.taskApproval': {
    roles: inboxReaders,
    query: 'query($id: ID!) { taskApproval(id: $id) { id summary payload task { message } } }',
    variables: (target) => ({ id: target.taskApprovalId }),
  },
  'Mutation.approveTaskApproval': {
    roles: managers,
    query: 'mutation($id: ID!) { approveTaskApproval(id: $id, note: "probe") { id status summary } }',
    variables: (target) => ({ id: target.taskApprovalId }),
  },
  'Mutation.rejectTaskApproval': {
    roles: managers,
    query: 'mutation($id: ID!) { rejectTaskApproval(id: $id, note: "probe") { id status summary } }',
    variables: (target) => ({ id: target.taskApprovalId }),
  },
  'Mutation.requestTaskApprovalChanges': {
    roles: managers,
    query: 'mutation($id: ID!) { requestTaskApprovalChanges(id: $id, note: "probe") { id status summary } }',
    variables: (target) => ({ id: target.taskApprovalId }),
  },
  'Query.taskWebhooks': {
    roles: everyone,
    query: 'query($taskId: ID!) { taskWebhooks(taskId: $taskId) { id url notificationToken } }',
    variables: (target) => ({ taskId: target.taskId }),
  },
  'Query.taskWebhook': {
    roles: everyone,
    query: 'query($taskId: ID!, $id: ID!) { taskWebhook(taskId: $taskId, id: $id) { id url } }',
    variables: (target) => ({ taskId: target.taskId, id: target.webhookId }),
  },
  'Mutation.createTaskWebhook': {
    roles: everyone,
    query: `mutation($taskId: ID!) {
      createTaskWebhook(input: { taskId: $taskId, url: "https://hooks.example.com/probe" }) { secret }
    }`,
    variables: (target) => ({ taskId: target.taskId }),
  },
  'Mutation.deleteTaskWebhook': {
    roles: everyone,
    query: 'mutation($taskId: ID!, $id: ID!) { deleteTaskWebhook(taskId: $taskId, id: $id) { id url } }',
    variables: (target) => ({ taskId: target.taskId, id: target.webhookId }),
  },
  'Query.routine': {
    roles: everyone,
    query: 'query($id: ID!) { routine(id: $id) { id message cron } }',
    variables: (target) => ({ id: target.routineId }),
  },
  'Mutation.updateRoutine': {
    roles: managers,
    query: 'mutation($id: ID!) { updateRoutine(id: $id, input: { enabled: false }) { id message } }',
    variables: (target) => ({ id: target.routineId }),
  },
  'Mutation.deleteRoutine': {
    roles: managers,
    query: 'mutation($id: ID!) { deleteRoutine(id: $id) { id message } }',
    variables: (target) => ({ id: target.routineId }),
  },
  'Query.canaryPolicy': {
    roles: everyone,
    query: 'query($baseModel: String!) { canaryPolicy(baseModel: $baseModel) { action minimumTasks } }',
    variables: (target) => ({ baseModel: target.baseModel }),
  },
  'Mutation.setCanaryPolicy': {
    roles: managers,
    query: `mutation($baseModel: String!) {
      setCanaryPolicy(baseModel: $baseModel, input: {
        guardrails: [{ metric: "failure_rate", direction: "lower_is_better", tolerance: 0.1 }],
        minimumTasks: 10, maxDurationSeconds: 60, action: "recommend_only" }) { action }
    }`,
    variables: (target) => ({ baseModel: target.baseModel }),
  },
  'Mutation.bindAgentModel': {
    roles: managers,
    query:
      'mutation($baseModel: String!) { bindAgentModel(role: "cfo", baseModel: $baseModel) { role baseModel } }',
    variables: (target) => ({ baseModel: target.baseModel }),
  },
  'Mutation.promoteModelVersion': {
    roles: managers,
    query: 'mutation($id: ID!) { promoteModelVersion(id: $id) { id tenantId } }',
    variables: (target) => ({ id: target.modelVersionId }),
  },
  'Mutation.rollbackModel': {
    roles: managers,
    query: `mutation($tenantId: ID!, $baseModel: String!) {
      rollbackModel(tenantId: $tenantId, baseModel: $baseModel, input: { reason: "probe" }) { id tenantId }
    }`,
    variables: (target) => ({ tenantId: target.tenantId, baseModel: target.baseModel }),
  },
  'Mutation.registerModelVersion': {
    roles: managers,
    createsOwn: true,
    query: `mutation($baseModel: String!) {
      registerModelVersion(input: { baseModel: $baseModel, provider: "openai", trainingDataHash: "h",
        hyperparameters: {}, evaluationMetrics: {} }) { tenantId versionNumber }
    }`,
    variables: (target) => ({ baseModel: target.baseModel }),
  },
  'Mutation.prepareOnboarding': {
    roles: managers,
    createsOwn: true,
    query: `mutation($processId: String!, $candidateId: String!) {
      prepareOnboarding(processId: $processId, candidateId: $candidateId, input: { jobDesignData: {},
        candidateName: "Grace Hopper", salary: { minAmount: 1, maxAmount: 2, basis: annual, currency: "USD" },
        location: "Berlin, Germany" }) { generation candidateName history { candidateName } }
    }`,
    variables: (target) => ({ processId: target.processId, candidateId: target.candidateId }),
  },
};

let t: TestApp;
let a: SeededTenant;
/** A call of tenant A waiting for approval. */
let approvalId: string;
/** A decision tenant A's agent asked for on a task of its own, waiting. */
let taskApprovalId: string;
/** A webhook of tenant A and one delivery of it. */
let webhook: { webhookId: string; deliveryId: string };
/** A routine of tenant A. */
let routineId: string;
/** Tenant B's callers, one per role. */
const outsiders = {} as Record<Role, Caller>;

const targetOf = (seeded: SeededTenant): Target => ({
  tenantId: seeded.tenantId,
  abTestId: seeded.abTestId,
  variantId: seeded.variantIds[1] as string,
  connectorId: seeded.connectorId,
  taskId: seeded.runningTaskId,
  threadId: seeded.threadId,
  recommendationId: seeded.recommendationId,
  modelVersionId: seeded.modelVersionIds[0] as string,
  baseModel: seeded.baseModel,
  processId: seeded.processId,
  candidateId: seeded.candidateId,
  approvalId,
  taskApprovalId,
  ...webhook,
  routineId,
});

/** Ids of nothing; names nobody used (each call gets new ones, so name-keyed creations start afresh). */
const nothing = (): Target => ({
  tenantId: randomUUID(),
  abTestId: randomUUID(),
  variantId: randomUUID(),
  connectorId: randomUUID(),
  taskId: randomUUID(),
  threadId: randomUUID(),
  recommendationId: randomUUID(),
  modelVersionId: randomUUID(),
  baseModel: `model-${randomUUID().slice(0, 8)}`,
  processId: `proc-${randomUUID().slice(0, 8)}`,
  candidateId: `cand-${randomUUID().slice(0, 8)}`,
  approvalId: randomUUID(),
  taskApprovalId: randomUUID(),
  webhookId: randomUUID(),
  deliveryId: randomUUID(),
  routineId: randomUUID(),
});

/** Strings that only tenant A's data holds, except what the request itself names (errors may echo it). */
function markersOf(seeded: SeededTenant, request: unknown): string[] {
  const sent = JSON.stringify(request);
  return [
    seeded.tenantId,
    seeded.connectorId,
    seeded.abTestId,
    seeded.runningTaskId,
    seeded.completedTaskId,
    seeded.threadId,
    seeded.recommendationId,
    approvalId,
    taskApprovalId,
    'Secret offer',
    'approval-probe@example.com',
    webhook.webhookId,
    webhook.deliveryId,
    'hooks.tenant-a.example',
    routineId,
    'Secret weekly plan',
    ...seeded.variantIds,
    ...seeded.modelVersionIds,
    'Plan Q3',
    'Ada Lovelace',
    'Stripe',
  ].filter((marker) => !sent.includes(marker));
}

type Outcome = 'not found' | 'forbidden' | 'own object' | string;

/** What a GraphQL answer amounts to, for comparison between A's ids and ids of nothing. */
function outcomeOf(
  result: { data?: unknown; errors?: readonly { extensions?: Record<string, unknown> }[] },
  field: string,
): Outcome {
  const code = result.errors?.[0]?.extensions?.code;
  if (code === 'NOT_FOUND') return 'not found';
  if (code === 'FORBIDDEN') return 'forbidden';
  if (code) return `error ${code}`;
  const value = (result.data as Record<string, unknown> | null | undefined)?.[field];
  if (value === null || (Array.isArray(value) && value.length === 0)) return 'not found';
  return 'own object';
}

/** Gates every POST of tenant A's connector and asks for one, as its agent. */
async function seedPendingApproval(seeded: SeededTenant): Promise<string> {
  const chairman = await t.caller(['chairman'], { tenantId: seeded.tenantId });
  const agent = await t.caller(['agent'], { tenantId: seeded.tenantId });
  const template = {
    name: 'Stripe',
    baseUrl: 'https://api.stripe.com/v1',
    authType: 'bearer',
    endpoints: [{ method: 'POST', path: '/customers' }],
  };
  const updated = await t.graphql(
    'mutation($id: ID!, $input: ConnectorInput!) { updateConnector(id: $id, input: $input) { id } }',
    { id: seeded.connectorId, input: { template } },
    chairman,
  );
  if (updated.errors) throw new Error(JSON.stringify(updated.errors));
  const policy = await t.graphql(
    'mutation($id: ID!) { setConnectorApprovalPolicy(id: $id, policy: { rules: [{ methods: ["POST"] }] }) { id } }',
    { id: seeded.connectorId },
    chairman,
  );
  if (policy.errors) throw new Error(JSON.stringify(policy.errors));
  const invoked = await t.graphql<{ invokeConnector: { id: string } }, Record<string, unknown>>(
    `mutation($id: ID!) {
      invokeConnector(id: $id, endpoint: { method: "POST", path: "/customers" },
        input: { body: { email: "approval-probe@example.com" } }) { ... on ConnectorCallApproval { id } }
    }`,
    { id: seeded.connectorId },
    agent,
  );
  if (!invoked.data?.invokeConnector.id) throw new Error(JSON.stringify(invoked.errors));
  return invoked.data.invokeConnector.id;
}

/**
 * Tenant A's agent claims a task of its own and asks for a decision on it: the request waits. Of a role
 * without a webhook: the relay publishes these events at its own pace, and a delivery it wrote for the
 * seeded webhook would change what the last test reads.
 */
async function seedTaskApproval(seeded: SeededTenant): Promise<string> {
  const { agent, member } = seeded.callers;
  const chat = await t.graphql(
    'mutation { sendChatMessage(role: "cpo", input: { message: "Secret offer draft" }) { taskId } }',
    undefined,
    member,
  );
  expect(chat.errors).toBeUndefined();
  const claimed = await t.graphql('mutation { claimTask(role: "cpo") { id } }', undefined, agent);
  const taskId = (claimed.data as { claimTask: { id: string } }).claimTask.id;
  const asked = await t.graphql(
    `mutation($id: ID!) {
      requestTaskApproval(taskId: $id, input: { summary: "Secret offer to Acme", payload: { amount: 1200 } }) { id }
    }`,
    { id: taskId },
    agent,
  );
  expect(asked.errors).toBeUndefined();
  return (asked.data as { requestTaskApproval: { id: string } }).requestTaskApproval.id;
}

/**
 * A webhook of tenant A with one delivery, written as the store and the relay write them (registration
 * would resolve the URL's host, which this test has no resolver for; what is read here is the rows).
 */
async function seedWebhook(seeded: SeededTenant): Promise<{ webhookId: string; deliveryId: string }> {
  const webhookId = randomUUID();
  const deliveryId = randomUUID();
  await t.db.prisma.webhook.create({
    data: {
      id: webhookId,
      tenantId: seeded.tenantId,
      role: 'cfo',
      url: 'https://hooks.tenant-a.example/boardroom',
      keyId: 'probe',
      sealedSecret: randomBytes(60),
      createdBy: 'chair-a',
    },
  });
  await t.db.prisma.webhookDelivery.create({
    data: {
      id: deliveryId,
      tenantId: seeded.tenantId,
      webhookId,
      messageId: deliveryId,
      eventId: randomUUID(),
      eventType: 'task.queued',
      body: '{"type":"task.queued"}',
      status: 'failed',
    },
  });
  return { webhookId, deliveryId };
}

beforeAll(async () => {
  // With a key, so that setting a credential reaches the connector lookup instead of NOT_CONFIGURED.
  t = await createTestApp({ env: { CONNECTOR_SECRETS_KEY: `probe:${randomBytes(32).toString('base64')}` } });
  a = await seedTenant(t);
  approvalId = await seedPendingApproval(a);
  taskApprovalId = await seedTaskApproval(a);
  webhook = await seedWebhook(a);
  const routine = await t.graphql<{ createRoutine: { id: string } }, Record<string, unknown>>(
    'mutation { createRoutine(input: { role: "cfo", cron: "0 9 * * 1", timeZone: "UTC", message: "Secret weekly plan" }) { id } }',
    {},
    await t.caller(['chairman'], { tenantId: a.tenantId }),
  );
  if (!routine.data?.createRoutine.id) throw new Error(JSON.stringify(routine.errors));
  routineId = routine.data.createRoutine.id;
  const tenantB = randomUUID();
  await t.app.services.tenants.ensure(tenantB);
  for (const role of everyone) outsiders[role] = await t.caller([role], { tenantId: tenantB });
});
afterAll(() => t.close());

describe('tenant isolation, generated from the schema', () => {
  it('has a case for every query and mutation that takes an id', () => {
    expect(Object.keys(cases).sort()).toEqual(fieldsWithIdArguments().sort());
  });

  for (const [coordinate, testCase] of Object.entries(cases)) {
    const field = coordinate.split('.')[1] as string;
    for (const role of everyone) {
      const expected = !testCase.roles.includes(role)
        ? 'forbidden'
        : testCase.createsOwn
          ? 'own object'
          : 'not found';
      it(`${coordinate} as another tenant's ${role}: ${expected}, as for an id of nothing`, async () => {
        const outsider = outsiders[role];
        const variables = testCase.variables(targetOf(a));
        const answer = await t.graphql(testCase.query, variables, outsider);
        const reference = await t.graphql(testCase.query, testCase.variables(nothing()), outsider);
        for (const marker of markersOf(a, variables)) expect(JSON.stringify(answer)).not.toContain(marker);
        expect(outcomeOf(answer, field)).toBe(expected);
        expect(outcomeOf(answer, field)).toBe(outcomeOf(reference, field));
      });
    }
  }

  it('leaves tenant A’s objects as they were', async () => {
    const snapshot = `query($connector: ID!, $test: ID!, $task: ID!, $base: String!, $approval: ID!, $taskApproval: ID!) {
      connector(id: $connector) { version template approvalPolicy }
      connectorCallApproval(id: $approval) { status decidedBy call { outcome } }
      taskApproval(id: $taskApproval) { status decidedBy task { status } }
      abTest(id: $test) { status variants { observations successes } }
      task(id: $task) { status output }
      modelVersions(baseModel: $base) { versionNumber deploymentStatus }
    }`;
    const variables = {
      connector: a.connectorId,
      test: a.abTestId,
      task: a.runningTaskId,
      base: `${a.baseModel}`,
      approval: approvalId,
      taskApproval: taskApprovalId,
    };
    const seen = await t.graphql(snapshot, variables, a.callers.all);
    expect(seen.errors).toBeUndefined();
    expect(seen.data).toMatchObject({
      // Version 2 holds the endpoint the seed added, version 3 the approval policy.
      connector: { version: 3, approvalPolicy: { rules: [{ methods: ['POST'], path: '/**' }] } },
      connectorCallApproval: { status: 'pending', decidedBy: null, call: null },
      taskApproval: { status: 'pending', decidedBy: null, task: { status: 'awaiting_approval' } },
      abTest: { status: 'running', variants: [{ observations: 0 }, { observations: 0 }] },
      task: { status: 'running', output: null },
      modelVersions: [
        { versionNumber: 2, deploymentStatus: 'production' },
        { versionNumber: 1, deploymentStatus: 'archived' },
      ],
    });
    // Neither rotated, disabled nor redelivered by another tenant.
    const hook = await t.db.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.webhookId } });
    expect([hook.status, hook.secretRotatedAt, hook.disabledAt]).toEqual(['active', null, null]);
    expect(await t.db.prisma.webhookDelivery.count({ where: { webhookId: webhook.webhookId } })).toBe(1);
    // Neither disabled nor deleted by another tenant.
    const routine = await t.db.prisma.routine.findUniqueOrThrow({ where: { id: routineId } });
    expect(routine.enabled).toBe(true);
  });
});

describe('tenant isolation on the REST routes', () => {
  const routes: { name: string; roles: Role[]; request(target: Target): [string, string, unknown?] }[] = [
    {
      name: 'GET a connector',
      roles: everyone,
      request: (x) => ['GET', `/api/v1/forge/connectors/${x.connectorId}`],
    },
    {
      name: 'PUT a connector',
      roles: managers,
      request: (x) => [
        'PUT',
        `/api/v1/forge/connectors/${x.connectorId}`,
        { template: { name: 'Probe', base_url: 'https://api.example.com', auth_type: 'none' } },
      ],
    },
    {
      name: 'GET A/B results',
      roles: everyone,
      request: (x) => ['GET', `/api/v1/ux/ab-tests/${x.abTestId}/results`],
    },
    {
      name: 'POST a rollback',
      roles: managers,
      request: (x) => [
        'POST',
        `/api/v1/finetuning/models/${x.tenantId}/${x.baseModel}/rollback`,
        { reason: 'probe' },
      ],
    },
    {
      name: 'POST a chat turn to A’s thread',
      roles: everyone,
      request: (x) => ['POST', '/api/v1/agents/ceo/chat', { message: 'hello', thread_id: x.threadId }],
    },
  ];
  for (const route of routes) {
    for (const role of everyone) {
      const expected = route.roles.includes(role) ? 404 : 403;
      it(`${route.name} as another tenant's ${role}: ${expected}, as for an id of nothing`, async () => {
        const outsider = outsiders[role];
        const [method, path, body] = route.request(targetOf(a));
        const answer = await t.rest(method, path, { caller: outsider, body });
        const [refMethod, refPath, refBody] = route.request(nothing());
        const reference = await t.rest(refMethod, refPath, { caller: outsider, body: refBody });
        for (const marker of markersOf(a, [path, body]))
          expect(JSON.stringify(answer.body)).not.toContain(marker);
        expect(answer.status).toBe(expected);
        expect(answer.status).toBe(reference.status);
      });
    }
  }
});
