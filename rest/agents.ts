import { z } from 'zod';
import { acknowledgment } from '../src/domain/agents/chat.js';
import { graphql } from '../src/generated/graphql/index.js';
import { MAX_REQUEST_BYTES } from '../src/http/body.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath } from './route.js';

const SendChatMessage = graphql(`
  mutation SendChatMessage($role: String!, $input: ChatMessageInput!) {
    sendChatMessage(role: $role, input: $input) {
      task_id: taskId
      agent_role: agentRole
      status
      acknowledgment
    }
  }
`);

const AgentVitals = graphql(`
  query AgentVitals($role: String!) {
    agentVitals(role: $role) {
      agent_role: agentRole
      tasks_completed: tasksCompleted
      tasks_failed: tasksFailed
      avg_execution_time_seconds: avgExecutionTimeSeconds
      acceptance_rate: acceptanceRate
      outcome_accuracy: outcomeAccuracy
      tokens_used: tokensUsed
      cost_usd: costUsd
      period_start: periodStart
      period_end: periodEnd
    }
  }
`);

/**
 * Room for the largest valid message: every attachment at its limit, base64-encoded (about 66.7 MiB), plus
 * the JSON around it; the same limit the GraphQL endpoint applies.
 */
const MAX_CHAT_BODY_BYTES = MAX_REQUEST_BYTES;

export const agentsRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/agents/{role}/chat',
    tag: 'agents',
    summary: 'Queue a chat message as a task for an agent role',
    description:
      'Any authenticated role. 404 for a role the tenant does not have, or a thread_id of no thread of the tenant; 409 for a thread of another role. Tasks of a paused role are queued too.',
    document: SendChatMessage,
    variables: { role: fromPath('role'), input: fromBody() },
    status: 202,
    maxBodyBytes: MAX_CHAT_BODY_BYTES,
    respond: (data) => ({ data: data.sendChatMessage }),
    responseSchema: z.object({
      data: responseSchemaOf(SendChatMessage, { task_id: 'uuid', status: z.literal('pending') }),
    }),
    example: { message: 'Summarise last quarter’s cash flow.', persist_thread: true },
    responseExample: {
      data: {
        task_id: '6f1c2a57-3f0e-4b8e-9d3a-2b7c1f0e9a41',
        agent_role: 'cfo',
        status: 'pending',
        acknowledgment: acknowledgment('cfo', 0),
      },
    },
    errors: {
      404: 'The tenant has no such agent role, or `thread_id` names no thread of the tenant.',
      409: '`thread_id` names a thread of another agent role.',
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/agents/{role}/vitals',
    tag: 'agents',
    summary: 'Vital signs of an agent role over the trailing 24 hours',
    description:
      'Any authenticated role. 404 for a role the tenant does not have. Served from a cache for up to 2 seconds.',
    document: AgentVitals,
    variables: { role: fromPath('role') },
    status: 200,
    respond: (data) => ({ data: data.agentVitals }),
    errors: { 404: 'The tenant has no such agent role.' },
    responseExample: {
      data: {
        agent_role: 'cfo',
        tasks_completed: 42,
        tasks_failed: 3,
        avg_execution_time_seconds: 12.5,
        acceptance_rate: 0.75,
        outcome_accuracy: null,
        tokens_used: 183204,
        cost_usd: 4.12,
        period_start: '2026-11-21T09:30:00.000Z',
        period_end: '2026-11-22T09:30:00.000Z',
      },
    },
    responseSchema: z.object({
      // The period is documented as nullable, as it always has been, though GraphQL never answers null there.
      data: responseSchemaOf(AgentVitals, {
        period_start: z.iso.datetime().nullable(),
        period_end: z.iso.datetime().nullable(),
      }),
    }),
  }),
];
