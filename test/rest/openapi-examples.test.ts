import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXAMPLE_ID,
  payloadTooLargeExample,
  routeErrorExamples,
  sharedErrorExamples,
} from '../../rest/examples.js';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import { Promote, Register } from '../schema/finetuning-support.js';
import { type Caller, createTestApp, TEST_SECRET, type TestApp } from '../support/app.js';
import { fixedLookup } from '../support/https-server.js';

type Json = Record<string, any>;

let t: TestApp;
let document: Json;

beforeAll(async () => {
  t = await createTestApp({ egress: { lookup: fixedLookup({ 'api.acme-payments.com': '127.0.0.1' }) } });
  document = (await t.rest('GET', '/api/v1/openapi.json')).body;
});
afterAll(() => t.close());

const resolve = (node: Json): Json => {
  if (typeof node.$ref !== 'string') return node;
  const found = (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, key) => at[key], document);
  return resolve(found);
};

const operations = () =>
  Object.entries(document.paths as Json).flatMap(([route, methods]) =>
    Object.entries(methods as Json).map(([method, operation]) => ({
      route,
      method,
      operation: operation as Json,
    })),
  );

/** A validator of the document's schemas (OpenAPI 3.1: JSON Schema 2020-12, `$ref`s into components). */
function schemaValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ components: document.components }, 'openapi');
  return (schema: Json, value: unknown) => {
    const validate = ajv.compile(
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')),
    );
    return validate(value)
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  };
}

describe('the examples of the OpenAPI document', () => {
  it('give every error answer of every operation an example its schema accepts, none a stand-in', () => {
    const check = schemaValidator();
    for (const { route, method, operation } of operations()) {
      for (const [status, answer] of Object.entries(operation.responses as Json)) {
        if (Number(status) < 400) continue;
        const content = resolve(answer as Json).content?.['application/json'];
        const where = `${method.toUpperCase()} ${route} ${status}`;
        const values =
          status === '422'
            ? [resolve(content.schema).example]
            : Object.values((content.examples ?? {}) as Json).map((example) => example.value);
        expect(values.length, where).toBeGreaterThan(0);
        for (const value of values) {
          expect(check(content.schema, value), where).toEqual([]);
          expect(value, where).not.toEqual({ detail: 'Not Found' });
        }
      }
    }
  });

  it('give every success answer an example its documented schema accepts', () => {
    const check = schemaValidator();
    for (const { route, method, operation } of operations()) {
      const [status, answer] = Object.entries(operation.responses as Json)[0] as [string, Json];
      const content = answer.content['application/json'];
      expect(check(content.schema, content.example), `${method.toUpperCase()} ${route} ${status}`).toEqual(
        [],
      );
    }
  });

  it('show the acknowledgment a chat message gets', async () => {
    const member = await t.caller(['member']);
    const response = await t.rest('POST', '/api/v1/agents/cfo/chat', {
      caller: member,
      body: { message: 'Summarise last quarter’s cash flow.' },
    });
    expect(response.status).toBe(202);
    const example =
      document.paths['/api/v1/agents/{role}/chat'].post.responses['202'].content['application/json'].example;
    expect(example.data.acknowledgment).toBe(response.body.data.acknowledgment);
  });

  it('show the results the service computes for the example’s counts', async () => {
    const example =
      document.paths['/api/v1/ux/ab-tests/{test_id}/results'].get.responses['200'].content['application/json']
        .example;
    expect(example).toMatchObject({
      chi_squared_p_value: expect.closeTo(0.005916, 6),
      statistic: expect.closeTo(2.7524, 4),
      significant: true,
    });
  });
});

/** Ids in a detail as the examples write them. */
const normalized = (detail: string) =>
  detail.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, EXAMPLE_ID);

type Answer = { status: number; body: any };
/** How to make the service give each example: `${operationId or 'shared'} ${status} ${name}`. */
type Provokers = Record<string, () => Promise<Answer>>;

/** Examples no in-process request provokes: a database outage and a connector server's timeout. */
const NOT_PROVOKED = new Set([
  'shared 503 unavailable',
  'invokeConnector 504 headersTimeout',
  'invokeConnector 504 callDeadline',
  'testConnector 504 headersTimeout',
  'testConnector 504 callDeadline',
]);

describe('every error example', () => {
  let chairman: Caller;
  let member: Caller;
  let connector: string;
  let other: string;
  let sealed: string;
  const provokers: Provokers = {};

  const template = (name: string, authType = 'none') => ({
    template: {
      name,
      base_url: 'https://api.acme-payments.com/v1',
      auth_type: authType,
      endpoints: [{ method: 'GET', path: '/customers' }],
    },
  });
  const rest = (method: string, path: string, options: Parameters<TestApp['rest']>[2] = {}) =>
    t.rest(method, path, { caller: chairman, ...options });
  const oneDelegation = { delegations: [{ role: 'cfo', message: 'Revenue?' }], tokens_used: 0, cost_usd: 0 };
  /** A fresh tenant's CEO task its agent claimed and delegated (so it waits), and who may act on it. */
  const delegatedCeoTask = async () => {
    const boss = await t.caller(['chairman']);
    const agent = await t.caller(['agent'], { tenantId: boss.tenantId });
    const queued = await rest('POST', '/api/v1/agents/ceo/chat', {
      caller: boss,
      body: { message: 'Brief the board.' },
    });
    await t.graphql('mutation { claimNextTask(role: "ceo") { outcome } }', {}, agent);
    const id = queued.body.data.task_id as string;
    await rest('POST', `/api/v1/tasks/${id}/delegations`, { caller: agent, body: oneDelegation });
    return { id, boss, agent };
  };

  /** A fresh tenant whose cfo tasks the ceo reviews, with a cfo task its agent claimed (and completed). */
  const reviewedCfoTask = async (completed: boolean) => {
    const boss = await t.caller(['chairman']);
    const agent = await t.caller(['agent'], { tenantId: boss.tenantId });
    await t.graphql(
      'mutation { setCompletionPolicy(role: "cfo", input: { reviewerRole: "ceo" }) { role } }',
      {},
      boss,
    );
    const queued = await rest('POST', '/api/v1/agents/cfo/chat', { caller: boss, body: { message: 'Q3?' } });
    const id = queued.body.data.task_id as string;
    await t.graphql('mutation { claimNextTask(role: "cfo") { outcome } }', {}, agent);
    if (completed) {
      await t.graphql(
        `mutation { completeTask(id: "${id}", input: { tokensUsed: 1, costUsd: 0 }) { id } }`,
        {},
        agent,
      );
    }
    return { id, boss, agent };
  };

  beforeAll(async () => {
    chairman = await t.caller(['chairman', 'operator'], { sub: 'chair-1' });
    member = await t.caller(['member'], { tenantId: chairman.tenantId });
    await t.graphql('mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }', {}, chairman);
    connector = (await rest('POST', '/api/v1/forge/connectors', { body: template('Stripe') })).body.id;
    other = (await rest('POST', '/api/v1/forge/connectors', { body: template('Ledger') })).body.id;
    sealed = (await rest('POST', '/api/v1/forge/connectors', { body: template('Vault', 'bearer') })).body.id;
    const unknown = `/api/v1/forge/connectors/${EXAMPLE_ID}`;
    const call = { endpoint: { method: 'GET', path: '/customers' } };
    const notLive = await t.caller(['chairman']);
    const signed = (key: string, exp: string) =>
      new SignJWT({ tenant_id: chairman.tenantId, roles: ['member'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('alice')
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(key));

    Object.assign(provokers, {
      'shared 401 missingToken': () => rest('GET', '/api/v1/agents/cfo/vitals', { caller: null }),
      'shared 401 expiredToken': async () =>
        rest('GET', '/api/v1/agents/cfo/vitals', {
          caller: { ...member, token: await signed(TEST_SECRET, '-1m') },
        }),
      'shared 401 anotherSecret': async () =>
        rest('GET', '/api/v1/agents/cfo/vitals', {
          caller: { ...member, token: await signed('x'.repeat(48), '5m') },
        }),
      'shared 403 role': () =>
        rest('POST', '/api/v1/dogfood/agents/cfo/pause', { caller: member, body: { actor_user_id: 'm' } }),
      'shared 405 method': () => rest('DELETE', '/api/v1/agents/cfo/vitals'),
      'shared 429 rateLimited': async () => {
        const limited = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1' } });
        try {
          const caller = await limited.caller(['member']);
          await limited.rest('GET', '/api/v1/agents/cfo/vitals', { caller });
          const answer = await limited.rest('GET', '/api/v1/agents/cfo/vitals', { caller });
          // The seconds depend on the moment.
          return { ...answer, body: { detail: answer.body.detail.replace(/\d+ s$/, '42 s') } };
        } finally {
          await limited.close();
        }
      },
      'sendChatMessage 404 unknownRole': () =>
        rest('POST', '/api/v1/agents/intern/chat', { body: { message: 'x' } }),
      'sendChatMessage 404 unknownThread': () =>
        rest('POST', '/api/v1/agents/cfo/chat', { body: { message: 'x', thread_id: EXAMPLE_ID } }),
      'sendChatMessage 409 threadOfAnotherRole': async () => {
        const first = await rest('POST', '/api/v1/agents/ceo/chat', {
          body: { message: 'x', persist_thread: true },
        });
        const thread = (
          await t.graphql(`{ task(id: "${first.body.data.task_id}") { threadId } }`, {}, chairman)
        ).data as { task: { threadId: string } };
        return rest('POST', '/api/v1/agents/cfo/chat', {
          body: { message: 'x', thread_id: thread.task.threadId },
        });
      },
      'agentVitals 404 unknownRole': () => rest('GET', '/api/v1/agents/intern/vitals'),
      'abTestResults 404 unknownTest': () => rest('GET', `/api/v1/ux/ab-tests/${EXAMPLE_ID}/results`),
      'createConnector 409 nameTaken': () =>
        rest('POST', '/api/v1/forge/connectors', { body: template('Stripe') }),
      'readConnector 404 unknownConnector': () => rest('GET', unknown),
      'updateConnector 404 unknownConnector': () => rest('PUT', unknown, { body: template('Stripe') }),
      'updateConnector 409 nameTaken': () =>
        rest('PUT', `/api/v1/forge/connectors/${other}`, { body: template('Stripe') }),
      'updateConnector 412 staleVersion': async () => {
        for (const name of ['Ledger 2', 'Ledger 3']) {
          await rest('PUT', `/api/v1/forge/connectors/${other}`, { body: template(name) });
        }
        return rest('PUT', `/api/v1/forge/connectors/${other}`, {
          body: template('Ledger 4'),
          headers: { 'if-match': '"2"' },
        });
      },
      'readConnectorCredential 404 unknownConnector': () => rest('GET', `${unknown}/credential`),
      'setConnectorCredential 404 unknownConnector': () =>
        rest('PUT', `${unknown}/credential`, { body: { bearer: { token: 'sk_test_1' } } }),
      'setConnectorCredential 503 notConfigured': () =>
        rest('PUT', `/api/v1/forge/connectors/${sealed}/credential`, {
          body: { bearer: { token: 'sk_test_1' } },
        }),
      'clearConnectorCredential 404 unknownConnector': () => rest('DELETE', `${unknown}/credential`),
      'invokeConnector 404 unknownConnector': () => rest('POST', `${unknown}/invoke`, { body: call }),
      'invokeConnector 502 addressRefused': () =>
        rest('POST', `/api/v1/forge/connectors/${connector}/invoke`, { body: call }),
      'testConnector 404 unknownConnector': () => rest('POST', `${unknown}/test`),
      'testConnector 502 addressRefused': () => rest('POST', `/api/v1/forge/connectors/${connector}/test`),
      'invokeConnector 409 disabled': async () => {
        await t.db.prisma.connector.update({ where: { id: other }, data: { status: 'disabled' } });
        return rest('POST', `/api/v1/forge/connectors/${other}/invoke`, { body: call });
      },
      'testConnector 409 disabled': () => rest('POST', `/api/v1/forge/connectors/${other}/test`),
      'readConnectorApprovalPolicy 404 unknownConnector': () => rest('GET', `${unknown}/approval-policy`),
      'setConnectorApprovalPolicy 404 unknownConnector': () =>
        rest('PUT', `${unknown}/approval-policy`, { body: gateDeletes }),
      'clearConnectorApprovalPolicy 404 unknownConnector': () => rest('DELETE', `${unknown}/approval-policy`),
      'setConnectorApprovalPolicy 412 staleVersion': async () => {
        const policed = (await rest('POST', '/api/v1/forge/connectors', { body: template('Policed') })).body
          .id;
        for (let i = 0; i < 2; i++) {
          await rest('PUT', `/api/v1/forge/connectors/${policed}/approval-policy`, { body: gateDeletes });
        }
        return rest('PUT', `/api/v1/forge/connectors/${policed}/approval-policy`, {
          body: gateDeletes,
          headers: { 'if-match': '"2"' },
        });
      },
      'clearConnectorApprovalPolicy 412 staleVersion': async () => {
        const policed = (await rest('POST', '/api/v1/forge/connectors', { body: template('Cleared') })).body
          .id;
        for (let i = 0; i < 2; i++) {
          await rest('PUT', `/api/v1/forge/connectors/${policed}/approval-policy`, { body: gateDeletes });
        }
        return rest('DELETE', `/api/v1/forge/connectors/${policed}/approval-policy`, {
          headers: { 'if-match': '"2"' },
        });
      },
      'readConnectorCallApproval 404 unknownApproval': () =>
        rest('GET', `/api/v1/forge/approvals/${EXAMPLE_ID}`),
      'delegateTask 404 unknownTask': async () =>
        rest('POST', `/api/v1/tasks/${EXAMPLE_ID}/delegations`, {
          caller: await t.caller(['agent'], { tenantId: chairman.tenantId }),
          body: { delegations: [{ role: 'cfo', message: 'x' }], tokens_used: 0, cost_usd: 0 },
        }),
      'taskSteps 404 unknownTask': () => rest('GET', `/api/v1/tasks/${EXAMPLE_ID}/steps`),
      'cancelTask 404 unknownTask': () => rest('POST', `/api/v1/tasks/${EXAMPLE_ID}/cancel`, { body: {} }),
      'cancelTask 403 notYours': async () => {
        const { id, boss } = await delegatedCeoTask();
        const member = await t.caller(['member'], { tenantId: boss.tenantId });
        return rest('POST', `/api/v1/tasks/${id}/cancel`, { caller: member, body: {} });
      },
      'delegateTask 409 notRunning': async () => {
        const { id, agent } = await delegatedCeoTask();
        return rest('POST', `/api/v1/tasks/${id}/delegations`, { caller: agent, body: oneDelegation });
      },
      'cancelTask 409 ended': async () => {
        const { id, boss } = await delegatedCeoTask();
        await rest('POST', `/api/v1/tasks/${id}/cancel`, { caller: boss, body: {} });
        const cancelled = await rest('POST', `/api/v1/tasks/${id}/cancel`, { caller: boss, body: {} });
        return { ...cancelled, body: { detail: cancelled.body.detail.replace('cancelled', 'completed') } };
      },
      ...Object.fromEntries(
        (['accept', 'reject'] as const).flatMap((verb) => {
          const body = verb === 'accept' ? {} : { reason: 'Redo.' };
          return [
            [
              `${verb}Task 404 unknownTask`,
              () => rest('POST', `/api/v1/tasks/${EXAMPLE_ID}/${verb}`, { body }),
            ],
            [
              `${verb}Task 403 notReviewer`,
              async () => {
                const { id, boss } = await reviewedCfoTask(true);
                const cfoAgent = await t.caller(['agent'], { tenantId: boss.tenantId, agentRoles: ['cfo'] });
                return rest('POST', `/api/v1/tasks/${id}/${verb}`, { caller: cfoAgent, body });
              },
            ],
            [
              `${verb}Task 409 notInReview`,
              async () => {
                const { id, boss } = await reviewedCfoTask(false);
                return rest('POST', `/api/v1/tasks/${id}/${verb}`, { caller: boss, body });
              },
            ],
          ];
        }),
      ),
      'readTaskApproval 404 unknownTaskApproval': () => rest('GET', `/api/v1/task-approvals/${EXAMPLE_ID}`),
      'approveTaskApproval 404 unknownTaskApproval': () =>
        rest('POST', `/api/v1/task-approvals/${EXAMPLE_ID}/approve`, { body: {} }),
      'rejectTaskApproval 404 unknownTaskApproval': () =>
        rest('POST', `/api/v1/task-approvals/${EXAMPLE_ID}/reject`, { body: { note: 'Too generous' } }),
      'requestTaskApprovalChanges 404 unknownTaskApproval': () =>
        rest('POST', `/api/v1/task-approvals/${EXAMPLE_ID}/request-changes`, { body: {} }),
      ...Object.fromEntries(
        (
          [
            ['approve', 'approveTaskApproval', {}],
            ['reject', 'rejectTaskApproval', { note: 'Too generous' }],
            ['request-changes', 'requestTaskApprovalChanges', {}],
          ] as const
        ).map(([verb, operation, body]) => [
          `${operation} 409 expired`,
          async () => {
            const id = await expiredTaskApproval();
            const answer = await rest('POST', `/api/v1/task-approvals/${id}/${verb}`, { body });
            return {
              ...answer,
              body: { detail: answer.body.detail.replace(/at \S+;/, 'at 2026-11-23T09:30:00.000Z;') },
            };
          },
        ]),
      ),
      ...Object.fromEntries(
        ['approve', 'reject', 'request-changes'].flatMap((verb) => {
          const operation = {
            approve: 'approveConnectorCall',
            reject: 'rejectConnectorCall',
            'request-changes': 'requestConnectorCallChanges',
          }[verb];
          const decide = (id: string) => rest('POST', `/api/v1/forge/approvals/${id}/${verb}`, { body: {} });
          return [
            [`${operation} 404 unknownApproval`, () => decide(EXAMPLE_ID)],
            [
              `${operation} 409 expired`,
              async () => {
                const answer = await decide(await storedApproval({ expiresAt: new Date(Date.now() - 1000) }));
                return {
                  ...answer,
                  body: { detail: answer.body.detail.replace(/at \S+;/, 'at 2026-11-23T09:30:00.000Z;') },
                };
              },
            ],
            [
              `${operation} 409 cancelled`,
              async () => decide(await storedApproval({ status: 'cancelled', reason: 'origin_changed' })),
            ],
          ];
        }),
      ),
      'pauseAgent 400 notCSuite': () =>
        rest('POST', '/api/v1/dogfood/agents/intern/pause', { body: { actor_user_id: 'chair-1' } }),
      'pauseAgent 400 notLiveMode': () =>
        rest('POST', '/api/v1/dogfood/agents/cfo/pause', {
          caller: notLive,
          body: { actor_user_id: 'chair-1' },
        }),
      'resumeAgent 400 notCSuite': () =>
        rest('POST', '/api/v1/dogfood/agents/intern/resume', { body: { actor_user_id: 'chair-1' } }),
      'resumeAgent 400 notLiveMode': () =>
        rest('POST', '/api/v1/dogfood/agents/cfo/resume', {
          caller: notLive,
          body: { actor_user_id: 'chair-1' },
        }),
      'resumeAgent 409 notPaused': () =>
        rest('POST', '/api/v1/dogfood/agents/cfo/resume', { body: { actor_user_id: 'chair-1' } }),
      'rollbackModel 404 unknownBaseModel': () =>
        rest('POST', `/api/v1/finetuning/models/${chairman.tenantId}/support-assistant/rollback`, {
          body: { reason: 'x' },
        }),
      'rollbackModel 409 noProduction': async () => {
        await register('ready-only');
        return rest('POST', `/api/v1/finetuning/models/${chairman.tenantId}/ready-only/rollback`, {
          body: { reason: 'x' },
        });
      },
      'rollbackModel 409 nothingToRestore': async () => {
        await t.graphql(Promote, { id: await register('first-production') }, chairman);
        return rest('POST', `/api/v1/finetuning/models/${chairman.tenantId}/first-production/rollback`, {
          body: { reason: 'x' },
        });
      },
    } satisfies Provokers);
  });

  const gateDeletes = { rules: [{ methods: ['DELETE'] }] };

  /** A gated call of the example connector as stored, without the service's help (its input is not read). */
  /** A decision request of the chairman's tenant, on a task waiting for it, past its expiry. */
  async function expiredTaskApproval(): Promise<string> {
    const task = await t.db.prisma.task.create({
      data: {
        tenantId: chairman.tenantId,
        role: 'cfo',
        status: 'awaiting_approval',
        message: 'Send the offer?',
        createdBy: chairman.sub,
      },
    });
    const row = await t.db.prisma.taskApproval.create({
      data: {
        tenantId: chairman.tenantId,
        taskId: task.id,
        role: 'cfo',
        summary: 'Send this offer',
        payload: {},
        requestedBy: 'agent-cfo',
        expiresAt: new Date(Date.now() - 1000),
      },
    });
    return row.id;
  }

  async function storedApproval(overrides: Record<string, unknown>): Promise<string> {
    const row = await t.db.prisma.connectorCallApproval.create({
      data: {
        tenantId: chairman.tenantId,
        connectorId: connector,
        connectorVersion: 1,
        origin: 'https://api.acme-payments.com',
        method: 'GET',
        path: '/customers',
        approverRoles: ['chairman'],
        keyId: 'none',
        sealedInput: new Uint8Array(0),
        requestedBy: 'agent-1',
        expiresAt: new Date(Date.now() + 3_600_000),
        ...overrides,
      },
    });
    return row.id;
  }

  async function register(baseModel: string): Promise<string> {
    const input = {
      baseModel,
      provider: 'openai',
      trainingDataHash: 'sha256:x',
      hyperparameters: {},
      evaluationMetrics: {},
    };
    return (await t.graphql(Register, { input }, chairman)).data?.registerModelVersion.id as string;
  }

  const all = [
    ...Object.entries(sharedErrorExamples).flatMap(([status, examples]) =>
      Object.entries(examples).map(([name, detail]) => [`shared ${status} ${name}`, detail] as const),
    ),
    ...Object.entries(routeErrorExamples).flatMap(([operationId, statuses]) =>
      Object.entries(statuses).flatMap(([status, examples]) =>
        Object.entries(examples)
          // A route's 503 lists the shared outage beside its own reason.
          .filter(([name]) => !(status === '503' && name in sharedErrorExamples[503]))
          .map(([name, detail]) => [`${operationId} ${status} ${name}`, detail] as const),
      ),
    ),
  ];

  it.each(all.filter(([key]) => !NOT_PROVOKED.has(key)))(
    '%s is what the route answers',
    async (key, detail) => {
      const provoke = provokers[key];
      if (!provoke) throw new Error(`no request provokes ${key}`);
      const answer = await provoke();
      expect(answer.status).toBe(Number(key.split(' ')[1]));
      expect(normalized(answer.body.detail)).toBe(detail);
    },
  );

  it('413: the body limit’s own message', async () => {
    const answer = await rest('POST', '/api/v1/dogfood/agents/cfo/pause', {
      body: JSON.stringify({ actor_user_id: 'x'.repeat(MAX_BODY_BYTES) }),
    });
    expect(answer.status).toBe(413);
    expect(answer.body.detail).toBe(payloadTooLargeExample(MAX_BODY_BYTES).tooLarge);
  });

  it('leaves unprovoked only what needs an outage or a slow server', () => {
    expect([...NOT_PROVOKED].every((key) => all.some(([known]) => known === key))).toBe(true);
  });
});
