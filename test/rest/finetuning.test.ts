import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { type Caller, notAUuidAtPath, type TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';

const Register = graphql(`
  mutation FinetuningRestRegister($input: RegisterModelVersionInput!) {
    registerModelVersion(input: $input) {
      id
    }
  }
`);

const Promote = graphql(`
  mutation FinetuningRestPromote($id: ID!, $canaryTrafficPct: Int) {
    promoteModelVersion(id: $id, canaryTrafficPct: $canaryTrafficPct) {
      id
      deploymentStatus
    }
  }
`);

const AuditLog = graphql(`
  query FinetuningRestAudit($action: String) {
    auditLog(action: $action) {
      nodes {
        action
        actor
        outcome
        targetId
        details
      }
    }
  }
`);

let t: TestApp;
withTestApp((app) => (t = app));

async function register(caller: Caller, baseModel: string): Promise<string> {
  const result = await t.graphql(
    Register,
    {
      input: {
        baseModel,
        provider: 'openai',
        trainingDataHash: `sha256:${randomUUID()}`,
        hyperparameters: { epochs: 3, learning_rate_multiplier: 0.1 },
        evaluationMetrics: { accuracy: 0.91 },
      },
    },
    caller,
  );
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.registerModelVersion.id;
}

/** Registers `count` versions and promotes each to production in turn; returns their ids, oldest first. */
async function productionGenerations(caller: Caller, baseModel: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const id = await register(caller, baseModel);
    const promoted = await t.graphql(Promote, { id, canaryTrafficPct: null }, caller);
    expect(promoted.data?.promoteModelVersion.deploymentStatus).toBe('production');
    ids.push(id);
  }
  return ids;
}

const rollback = (
  caller: Caller | null,
  baseModel: string,
  body: unknown = { reason: 'eval regression' },
  tenantId = caller?.tenantId,
) =>
  t.rest('POST', `/api/v1/finetuning/models/${tenantId}/${encodeURIComponent(baseModel)}/rollback`, {
    caller,
    body,
  });

const statuses = async (tenantId: string, baseModel: string) =>
  (
    await t.db.prisma.modelVersion.findMany({
      where: { tenantId, baseModel },
      orderBy: { versionNumber: 'asc' },
    })
  ).map((version) => version.deploymentStatus);

describe('POST /api/v1/finetuning/models/{tenant_id}/{base_model}/rollback', () => {
  it('restores the previous production version and answers it as a ModelVersion', async () => {
    const operator = await t.caller(['operator']);
    const [v1] = await productionGenerations(operator, 'gpt-4o-mini', 2);
    const response = await rollback(operator, 'gpt-4o-mini', {
      reason: 'eval regression',
      performed_by: 'ops-oncall',
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: v1,
      tenant_id: operator.tenantId,
      base_model: 'gpt-4o-mini',
      provider: 'openai',
      version_number: 1,
      deployment_status: 'production',
      training_data_hash: expect.stringMatching(/^sha256:/),
      hyperparameters: { epochs: 3, learning_rate_multiplier: 0.1 },
      evaluation_metrics: { accuracy: 0.91 },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    });
    expect(await statuses(operator.tenantId, 'gpt-4o-mini')).toEqual(['production', 'retired']);
  });

  it('rolls back through three generations and then answers 409', async () => {
    const chairman = await t.caller(['chairman']);
    const [v1, v2] = await productionGenerations(chairman, 'llama-3.1-8b', 3);
    const first = await rollback(chairman, 'llama-3.1-8b');
    expect([first.status, first.body.id, first.body.version_number]).toEqual([200, v2, 2]);
    expect(await statuses(chairman.tenantId, 'llama-3.1-8b')).toEqual(['archived', 'production', 'retired']);
    const second = await rollback(chairman, 'llama-3.1-8b');
    expect([second.status, second.body.id, second.body.version_number]).toEqual([200, v1, 1]);
    expect(await statuses(chairman.tenantId, 'llama-3.1-8b')).toEqual(['production', 'retired', 'retired']);
    const third = await rollback(chairman, 'llama-3.1-8b');
    expect(third.status).toBe(409);
    expect(third.body).toEqual({ detail: 'No previous production version to restore before version 1' });
    expect(await statuses(chairman.tenantId, 'llama-3.1-8b')).toEqual(['production', 'retired', 'retired']);
  });

  it('restores the production that a newer promotion replaced, not a retired one', async () => {
    const operator = await t.caller(['operator']);
    const [v1, v2] = await productionGenerations(operator, 'mistral-small', 3);
    expect((await rollback(operator, 'mistral-small')).body.id).toBe(v2);
    const [v4] = await productionGenerations(operator, 'mistral-small', 1);
    expect(await statuses(operator.tenantId, 'mistral-small')).toEqual([
      'archived',
      'archived',
      'retired',
      'production',
    ]);
    expect((await rollback(operator, 'mistral-small')).body.id).toBe(v2);
    expect((await rollback(operator, 'mistral-small')).body.id).toBe(v1);
    expect(await t.db.prisma.modelVersion.findUniqueOrThrow({ where: { id: v4 as string } })).toMatchObject({
      deploymentStatus: 'retired',
    });
  });

  it('takes a base model name with a slash, percent-encoded in the path', async () => {
    const operator = await t.caller(['operator']);
    const [v1] = await productionGenerations(operator, 'meta-llama/Llama-3.1-8B', 2);
    const response = await rollback(operator, 'meta-llama/Llama-3.1-8B');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: v1, base_model: 'meta-llama/Llama-3.1-8B' });
  });

  it('writes an audit row with the reason, performed_by and the token subject', async () => {
    const operator = await t.caller(['operator'], { sub: 'operator-7' });
    const [v1, v2] = await productionGenerations(operator, 'claude-haiku', 2);
    await rollback(operator, 'claude-haiku', {
      reason: 'hallucinations in billing answers',
      performed_by: 'agent-cto',
    });
    const audit = await t.graphql(AuditLog, { action: 'model.rollback' }, operator);
    expect(audit.data?.auditLog.nodes).toEqual([
      {
        action: 'model.rollback',
        actor: 'agent-cto',
        outcome: 'rolled_back',
        targetId: 'claude-haiku',
        details: {
          subject: 'operator-7',
          reason: 'hallucinations in billing answers',
          performed_by: 'agent-cto',
          retired_version_id: v2,
          restored_version_id: v1,
          restored_version_number: 1,
        },
      },
    ]);
  });

  it('keeps the reason and performed_by in the deployment history of both versions', async () => {
    const operator = await t.caller(['operator'], { sub: 'operator-8' });
    const [v1, v2] = await productionGenerations(operator, 'gemini-flash', 2);
    await rollback(operator, 'gemini-flash', { reason: 'latency', performed_by: 'sre-1' });
    const rows = await t.db.prisma.modelDeployment.findMany({
      where: { tenantId: operator.tenantId, reason: 'latency' },
      orderBy: { createdAt: 'asc' },
    });
    expect(
      rows.map(({ modelVersionId, fromStatus, toStatus, performedBy, actor }) => ({
        modelVersionId,
        fromStatus,
        toStatus,
        performedBy,
        actor,
      })),
    ).toEqual([
      {
        modelVersionId: v2,
        fromStatus: 'production',
        toStatus: 'retired',
        performedBy: 'sre-1',
        actor: 'operator-8',
      },
      {
        modelVersionId: v1,
        fromStatus: 'archived',
        toStatus: 'production',
        performedBy: 'sre-1',
        actor: 'operator-8',
      },
    ]);
  });

  it('answers 409 when no version is in production, and stores nothing', async () => {
    const operator = await t.caller(['operator']);
    await register(operator, 'qwen-7b');
    const response = await rollback(operator, 'qwen-7b');
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ detail: 'No production version to roll back' });
    expect(await statuses(operator.tenantId, 'qwen-7b')).toEqual(['ready']);
    expect(
      await t.db.prisma.auditEntry.count({
        where: { tenantId: operator.tenantId, action: 'model.rollback' },
      }),
    ).toBe(0);
  });

  it('answers 404 for an unknown base model', async () => {
    const operator = await t.caller(['operator']);
    const response = await rollback(operator, 'never-registered');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: "Base model 'never-registered' not found" });
  });

  it('answers 404 for another tenant’s id in the path, and leaves that tenant’s model alone', async () => {
    const owner = await t.caller(['operator']);
    await productionGenerations(owner, 'shared-name', 2);
    const outsider = await t.caller(['chairman']);
    await productionGenerations(outsider, 'shared-name', 2);
    const response = await rollback(outsider, 'shared-name', { reason: 'x' }, owner.tenantId);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: "Base model 'shared-name' not found" });
    expect(await statuses(owner.tenantId, 'shared-name')).toEqual(['archived', 'production']);
    expect(await statuses(outsider.tenantId, 'shared-name')).toEqual(['archived', 'production']);
  });

  it('answers 422 uuid_parsing at path.tenant_id for a malformed tenant id', async () => {
    const operator = await t.caller(['operator']);
    const response = await rollback(operator, 'gpt-4o-mini', { reason: 'x' }, 'not-a-uuid');
    expect(response.status).toBe(422);
    expect(response.body).toEqual(notAUuidAtPath('tenant_id'));
  });

  it('answers 422 missing at body.reason when the reason is left out', async () => {
    const operator = await t.caller(['operator']);
    const response = await rollback(operator, 'gpt-4o-mini', { performed_by: 'ops' });
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": {
              "performed_by": "ops",
            },
            "loc": [
              "body",
              "reason",
            ],
            "msg": "Field required",
            "type": "missing",
          },
        ],
      }
    `);
  });

  it('answers 422 for an empty reason and for a reason over 2000 characters', async () => {
    const operator = await t.caller(['operator']);
    const empty = await rollback(operator, 'gpt-4o-mini', { reason: '' });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toEqual([
      {
        type: 'string_too_short',
        loc: ['body', 'reason'],
        msg: 'String should have at least 1 character',
        input: '',
        ctx: { min_length: 1 },
      },
    ]);
    const long = await rollback(operator, 'gpt-4o-mini', { reason: 'x'.repeat(2001) });
    expect(long.status).toBe(422);
    expect(long.body.detail[0]).toMatchObject({
      type: 'string_too_long',
      loc: ['body', 'reason'],
      ctx: { max_length: 2000 },
    });
  });

  it('answers 422 string_type for a performed_by that is not a string', async () => {
    const operator = await t.caller(['operator']);
    const response = await rollback(operator, 'gpt-4o-mini', { reason: 'x', performed_by: 42 });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'string_type',
        loc: ['body', 'performed_by'],
        msg: 'Input should be a valid string',
        input: 42,
      },
    ]);
  });

  it('answers 422 for a missing body', async () => {
    const operator = await t.caller(['operator']);
    const response = await t.rest(
      'POST',
      `/api/v1/finetuning/models/${operator.tenantId}/gpt-4o-mini/rollback`,
      { caller: operator },
    );
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }],
    });
  });

  it('answers 401 with WWW-Authenticate without a token', async () => {
    const response = await rollback(null, 'gpt-4o-mini', { reason: 'x' }, randomUUID());
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.body).toEqual({ detail: 'Not authenticated' });
  });

  it('answers 403 to a member or an agent before looking at the body', async () => {
    for (const role of ['member', 'agent'] as const) {
      const caller = await t.caller([role]);
      const response = await rollback(caller, 'gpt-4o-mini', {});
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ detail: 'Not allowed for your role' });
    }
  });

  it('serializes concurrent rollbacks: two succeed, the rest answer 409 and one production remains', async () => {
    const operator = await t.caller(['operator']);
    const [v1, v2, v3] = await productionGenerations(operator, 'concurrent-model', 3);
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => rollback(operator, 'concurrent-model')),
    );
    const ok = responses.filter((response) => response.status === 200);
    expect(ok.map((response) => response.body.id).sort()).toEqual([v1, v2].sort());
    expect(responses.filter((response) => response.status === 409)).toHaveLength(4);
    expect(await statuses(operator.tenantId, 'concurrent-model')).toEqual([
      'production',
      'retired',
      'retired',
    ]);
    expect(await t.db.prisma.modelVersion.findUniqueOrThrow({ where: { id: v3 as string } })).toMatchObject({
      deploymentStatus: 'retired',
    });
  });
});
