import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath } from './route.js';

const PauseAgent = graphql(`
  mutation PauseAgent($role: String!, $input: PauseInput!) {
    pauseAgent(role: $role, input: $input, cSuiteOnly: true) {
      role
      paused
      paused_at: pausedAt
      event_id: eventId
    }
  }
`);

const ResumeAgent = graphql(`
  mutation ResumeAgent($role: String!, $input: PauseInput!) {
    resumeAgent(role: $role, input: $input, cSuiteOnly: true) {
      role
      paused
      resumed_at: resumedAt
      event_id: eventId
    }
  }
`);

export const dogfoodRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/dogfood/agents/{role}/pause',
    tag: 'dogfood',
    summary: 'Pause a C-suite agent (chairman only); emits DOGFOOD_AGENT_PAUSED',
    description: 'Idempotent: pausing a paused role answers 200 with the original paused_at and event_id.',
    document: PauseAgent,
    variables: { role: fromPath('role'), input: fromBody() },
    status: 200,
    respond: (data) => data.pauseAgent,
    // GraphQL's PauseResult has either time; each route answers its own.
    responseSchema: responseSchemaOf(PauseAgent, { paused_at: z.iso.datetime() }),
    example: { actor_user_id: 'user-chairman-1', reason: 'Quarterly review' },
    responseExample: {
      role: 'cfo',
      paused: true,
      paused_at: '2026-11-22T09:30:00.000Z',
      event_id: '3d0f6f0e-8a4b-4f3c-9b7e-1c2d3e4f5a6b',
    },
    errors: { 400: 'The role is not one of the 8 C-suite roles, or the tenant is not in dogfood live mode.' },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/dogfood/agents/{role}/resume',
    tag: 'dogfood',
    summary: 'Resume a paused C-suite agent (chairman only); emits DOGFOOD_AGENT_RESUMED',
    document: ResumeAgent,
    variables: { role: fromPath('role'), input: fromBody() },
    status: 200,
    respond: (data) => data.resumeAgent,
    // The document has always listed resumed_at last, after event_id.
    responseSchema: responseSchemaOf(ResumeAgent)
      .omit({ resumed_at: true })
      .extend({ resumed_at: z.iso.datetime() }),
    example: { actor_user_id: 'user-chairman-1' },
    responseExample: {
      role: 'cfo',
      paused: false,
      resumed_at: '2026-11-22T10:00:00.000Z',
      event_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    },
    errors: {
      400: 'The role is not one of the 8 C-suite roles, or the tenant is not in dogfood live mode.',
      409: 'The role has never been paused.',
    },
  }),
];
