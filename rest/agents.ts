import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { MAX_REQUEST_BYTES } from '../src/plugins/use-body-limit.js';
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
      data: z.object({
        task_id: z.uuid(),
        agent_role: z.string(),
        status: z.literal('pending'),
        acknowledgment: z.string(),
      }),
    }),
    example: { message: 'Summarise last quarter’s cash flow.', persist_thread: true },
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
    responseSchema: z.object({
      data: z.object({
        agent_role: z.string(),
        tasks_completed: z.int(),
        tasks_failed: z.int(),
        avg_execution_time_seconds: z.number().nullable(),
        acceptance_rate: z.number().nullable(),
        outcome_accuracy: z.number().nullable(),
        tokens_used: z.int(),
        cost_usd: z.number(),
        period_start: z.iso.datetime().nullable(),
        period_end: z.iso.datetime().nullable(),
      }),
    }),
  }),
];
