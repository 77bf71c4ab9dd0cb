import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath, type Route } from './route.js';

const RollbackModel = graphql(`
  mutation RollbackModel($tenantId: ID!, $baseModel: String!, $input: RollbackInput!) {
    rollbackModel(tenantId: $tenantId, baseModel: $baseModel, input: $input) {
      id
      tenant_id: tenantId
      base_model: baseModel
      provider
      version_number: versionNumber
      deployment_status: deploymentStatus
      canary_traffic_pct: canaryTrafficPct
      training_data_hash: trainingDataHash
      hyperparameters
      evaluation_metrics: evaluationMetrics
      created_at: createdAt
    }
  }
`);

// Documented as REST has always documented it: the status as a string, the canary share left out (not
// null) off canary, as respond answers it.
const modelVersionResponse = responseSchemaOf(RollbackModel, {
  id: 'uuid',
  tenant_id: 'guid',
  deployment_status: z.string(),
  canary_traffic_pct: z.int().optional(),
  hyperparameters: z.record(z.string(), z.unknown()),
  evaluation_metrics: z.record(z.string(), z.unknown()),
});

export const finetuningRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/finetuning/models/{tenant_id}/{base_model}/rollback',
    tag: 'finetuning',
    summary: 'Roll a fine-tuned model back to its previous production version (operator or chairman)',
    description:
      'The current production version is retired and the version that was production before it is restored and ' +
      'returned; every instance serves the change within 1 s. 409 when there is no production version or no ' +
      'previous one; 404 for an unknown base model or a tenant_id other than the caller’s.',
    document: RollbackModel,
    variables: { tenantId: fromPath('tenant_id'), baseModel: fromPath('base_model'), input: fromBody() },
    status: 200,
    // canary_traffic_pct is optional in the response: left out when the version is not on canary.
    respond: (data) => {
      const { canary_traffic_pct, ...version } = data.rollbackModel;
      return canary_traffic_pct == null ? version : { ...version, canary_traffic_pct };
    },
    responseSchema: modelVersionResponse,
    example: { reason: 'Eval regression on support tickets', performed_by: 'ops-oncall' },
    responseExample: {
      id: '7c6b5a49-3827-4165-9e4d-3c2b1a098f7e',
      tenant_id: '00000000-0000-4000-8000-00000000de30',
      base_model: 'support-assistant',
      provider: 'openai',
      version_number: 3,
      deployment_status: 'production',
      training_data_hash: 'sha256:9f2c…',
      hyperparameters: { epochs: 3, learning_rate_multiplier: 0.1 },
      evaluation_metrics: { accuracy: 0.91 },
      created_at: '2026-11-20T14:00:00.000Z',
    },
    errors: {
      404: 'Unknown base model, or a `tenant_id` other than the caller’s.',
      409: 'There is no production version, or no earlier production version to restore.',
    },
  }),
];
