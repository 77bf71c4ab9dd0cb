import { randomUUID } from 'node:crypto';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';

export const Register = graphql(`
  mutation FinetuningRegister($input: RegisterModelVersionInput!) {
    registerModelVersion(input: $input) {
      id
      tenantId
      baseModel
      provider
      versionNumber
      deploymentStatus
      canaryTrafficPct
      trainingDataHash
      hyperparameters
      evaluationMetrics
    }
  }
`);

export const Promote = graphql(`
  mutation FinetuningPromote($id: ID!, $canaryTrafficPct: Int) {
    promoteModelVersion(id: $id, canaryTrafficPct: $canaryTrafficPct) {
      id
      versionNumber
      deploymentStatus
      canaryTrafficPct
    }
  }
`);

export const Rollback = graphql(`
  mutation FinetuningRollback($tenantId: ID!, $baseModel: String!, $input: RollbackInput!) {
    rollbackModel(tenantId: $tenantId, baseModel: $baseModel, input: $input) {
      id
      versionNumber
      deploymentStatus
    }
  }
`);

export const Versions = graphql(`
  query FinetuningVersions($baseModel: String!) {
    modelVersions(baseModel: $baseModel) {
      id
      versionNumber
      deploymentStatus
      canaryTrafficPct
    }
  }
`);

export const Production = graphql(`
  query FinetuningProduction($baseModel: String!) {
    productionModel(baseModel: $baseModel) {
      id
      versionNumber
    }
  }
`);

export const History = graphql(`
  query FinetuningHistory($baseModel: String!) {
    modelVersions(baseModel: $baseModel) {
      versionNumber
      deployments {
        fromStatus
        toStatus
        canaryTrafficPct
        reason
        performedBy
        actor
      }
    }
  }
`);

export const VersionChanged = graphql(`
  subscription FinetuningVersionChanged($baseModel: String!) {
    modelVersionChanged(baseModel: $baseModel) {
      tenantId
      baseModel
      modelVersionId
      versionNumber
      deploymentStatus
      previousStatus
      modelVersion {
        id
        deploymentStatus
      }
    }
  }
`);

export const versionInput = (baseModel: string, overrides: Record<string, unknown> = {}) => ({
  baseModel,
  provider: 'anthropic',
  trainingDataHash: `sha256:${randomUUID()}`,
  hyperparameters: { epochs: 2 },
  evaluationMetrics: { win_rate: 0.6 },
  ...overrides,
});

export async function register(t: TestApp, caller: Caller, baseModel: string): Promise<string> {
  const result = await t.graphql(Register, { input: versionInput(baseModel) }, caller);
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.registerModelVersion.id;
}

export async function promote(
  t: TestApp,
  caller: Caller,
  id: string,
  canaryTrafficPct: number | null = null,
) {
  const result = await t.graphql(Promote, { id, canaryTrafficPct }, caller);
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.promoteModelVersion;
}

export async function productionGenerations(
  t: TestApp,
  caller: Caller,
  baseModel: string,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const id = await register(t, caller, baseModel);
    await promote(t, caller, id);
    ids.push(id);
  }
  return ids;
}

export const productionId = async (t: TestApp, caller: Caller, baseModel: string) =>
  (await t.graphql(Production, { baseModel }, caller)).data?.productionModel?.id ?? null;
