import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath, fromQuery } from './route.js';

graphql(`
  fragment TaskTreeWire on Task {
    id
    role
    status
    parent_task_id: parentTaskId
    root_task_id: rootTaskId
    depth
    cost_cap_usd: costCapUsd
  }
`);

const DelegateTaskRoute = graphql(`
  mutation DelegateTask($taskId: ID!, $input: DelegateTaskInput!) {
    delegateTask(taskId: $taskId, input: $input) {
      parent {
        ...TaskTreeWire
      }
      children {
        ...TaskTreeWire
      }
    }
  }
`);

const CancelTaskRoute = graphql(`
  mutation CancelTask($id: ID!, $reason: String) {
    cancelTask(id: $id, reason: $reason) {
      ...TaskTreeWire
    }
  }
`);

const TaskStepsRoute = graphql(`
  query TaskSteps($id: ID!, $first: Int, $after: String) {
    task(id: $id) {
      steps(first: $first, after: $after) {
        data: nodes {
          id
          seq
          attempt
          kind
          source
          actor
          started_at: startedAt
          duration_ms: durationMs
          model
          input_tokens: inputTokens
          cached_input_tokens: cachedInputTokens
          output_tokens: outputTokens
          reasoning_tokens: reasoningTokens
          tokens
          cost_usd: costUsd
          cost_usd_text: costUsdText
          charged
          finish_reason: finishReason
          connector_id: connectorId
          endpoint
          http_status: httpStatus
          bytes
          outcome
          approval_id: approvalId
          child_task_id: childTaskId
          model_version_id: modelVersionId
          routing
          reason
          content
        }
        next_cursor: nextCursor
      }
    }
  }
`);

graphql(`
  fragment TaskReviewWire on Task {
    id
    role
    status
    attempts
    finished_at: finishedAt
    review {
      id
      status
      reviewer_role: reviewerRole
      requested_by: requestedBy
      decided_by: decidedBy
      note
      outcome
    }
  }
`);

const AcceptTaskRoute = graphql(`
  mutation AcceptTask($id: ID!, $note: String) {
    acceptTask(id: $id, note: $note) {
      ...TaskReviewWire
    }
  }
`);

const RejectTaskRoute = graphql(`
  mutation RejectTask($id: ID!, $reason: String!) {
    rejectTask(id: $id, reason: $reason) {
      ...TaskReviewWire
    }
  }
`);

/** A task and its latest review, as the review routes answer it. */
const taskReviewResponse = responseSchemaOf(AcceptTaskRoute, {
  id: 'uuid',
  finished_at: 'date-time',
  'review.id': 'uuid',
});

const reviewedTaskId = '3b9e7c1d-2a4f-4e8b-9c6d-1f0a2b3c4d5e';
const reviewedTask = (status: string, review: Record<string, unknown>) => ({
  id: reviewedTaskId,
  role: 'cfo',
  status,
  attempts: 1,
  finished_at: status === 'pending' ? null : '2026-12-03T09:30:00.000Z',
  review: {
    id: '8c7b6a5f-4e3d-4c2b-9a1f-0e9d8c7b6a5f',
    reviewer_role: 'ceo',
    requested_by: 'agent-cfo-runtime',
    decided_by: 'user-chairman',
    ...review,
  },
});

const REVIEW_ERRORS = {
  403: 'The caller is an agent not working for the task’s reviewer role (`not_reviewer`), or the agent whose completion it is (`own_request`).',
  404: 'No task of the caller’s tenant has this id.',
  409: 'The task is not in review (`task_not_in_review`, with its `status`).',
};

const rootId = '6f1c2a57-3f0e-4b8e-9d3a-2b7c1f0e9a41';
const waitingRoot = {
  id: rootId,
  role: 'ceo',
  status: 'waiting',
  parent_task_id: null,
  root_task_id: rootId,
  depth: 0,
  cost_cap_usd: null,
};
const child = (id: string, role: string, cap: number | null) => ({
  id,
  role,
  status: 'pending',
  parent_task_id: rootId,
  root_task_id: rootId,
  depth: 1,
  cost_cap_usd: cap,
});

/** A task's place in its delegation tree, as the routes answer it. */
const taskTreeResponse = responseSchemaOf(CancelTaskRoute, {
  id: 'uuid',
  parent_task_id: 'uuid',
  root_task_id: 'uuid',
});

const stepExample = {
  id: '8b2f4c1d-7e6a-4f3b-9c2d-1a0e9f8b7c6d',
  seq: 2,
  attempt: 1,
  kind: 'model_call',
  source: 'agent',
  actor: 'agent-cfo',
  started_at: '2026-12-03T09:00:01.250Z',
  duration_ms: 840,
  model: 'gpt-4.1-mini',
  input_tokens: 1200,
  cached_input_tokens: 400,
  output_tokens: 300,
  reasoning_tokens: 0,
  tokens: 1500,
  cost_usd: 0.00096,
  cost_usd_text: '0.000960',
  charged: true,
  finish_reason: 'tool_calls',
  connector_id: null,
  endpoint: null,
  http_status: null,
  bytes: null,
  outcome: null,
  approval_id: null,
  child_task_id: null,
  model_version_id: null,
  routing: null,
  reason: null,
  content: null,
};

/** Delegation and cancellation: the tree of tasks a delegating agent builds (see docs/org-chart.md). */
export const tasksRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/tasks/{id}/steps',
    tag: 'agents',
    summary: 'Read a task’s run record: its steps in order, oldest first',
    description:
      'The `Task.steps` field of GraphQL (docs/runs.md): whoever may read the task may read its steps. `limit` 1–1000 (default 100); pass `next_cursor` as `cursor` for the next page (null on the last).',
    document: TaskStepsRoute,
    variables: { id: fromPath('id'), first: fromQuery('limit', 'int'), after: fromQuery('cursor') },
    status: 200,
    missing: (data, { id }) => (data.task ? null : `Task ${id} not found`),
    respond: (data) => data.task?.steps,
    responseSchema: responseSchemaOf(TaskStepsRoute, {
      'steps.data.id': 'uuid',
      'steps.data.connector_id': 'uuid',
      'steps.data.approval_id': 'uuid',
      'steps.data.child_task_id': 'uuid',
      'steps.data.model_version_id': 'uuid',
    }).shape.steps,
    responseExample: { data: [stepExample], next_cursor: null },
    errors: { 404: 'No task of the caller’s tenant (of its roles, for a role-bound agent) has this id.' },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/tasks/{id}/delegations',
    tag: 'agents',
    summary: 'Hand parts of a running task to other roles as sub-tasks',
    description:
      'Agent role only, for a task it holds. Body: `delegations` (1 to 10 of `{role, message, cost_cap_usd?}`), `resume_on` (`all_ended`, default, or `first_failure`), and the usage of the attempt so far (`tokens_used`, `cost_usd`, `usage`?), charged at once. The task waits (`waiting`, no lease) until its sub-tasks have ended, then is pending again for its role. 422 with `reason` when a delegation goes against the rules, and nothing is written: `unknown_role`, `delegation_cycle` (with the chain), `not_along_org_chart` (with the allowed targets), `depth_limit`, `cap_exceeds_room` (with the room left).',
    document: DelegateTaskRoute,
    variables: { taskId: fromPath('id'), input: fromBody() },
    status: 201,
    respond: (data) => ({ data: data.delegateTask }),
    responseSchema: z.object({
      data: z.object({ parent: taskTreeResponse, children: z.array(taskTreeResponse) }),
    }),
    example: {
      delegations: [
        { role: 'cfo', message: 'What is this quarter’s revenue?', cost_cap_usd: 2 },
        { role: 'clo', message: 'Is any litigation open?' },
      ],
      resume_on: 'all_ended',
      tokens_used: 1200,
      cost_usd: 0.0031,
    },
    responseExample: {
      data: {
        parent: waitingRoot,
        children: [
          child('0d7a3f2e-9b1c-4e6d-8a5f-3c2b1a0f9e8d', 'cfo', 2),
          child('5e4d3c2b-1a0f-4e9d-8c7b-6a5f4e3d2c1b', 'clo', null),
        ],
      },
    },
    errors: {
      404: 'No task of the caller’s tenant has this id.',
      409: 'The task is not running, or its lease lapsed.',
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/tasks/{id}/cancel',
    tag: 'agents',
    summary: 'Cancel a task and every sub-task under it that has not ended',
    description:
      'Body `{}` or `{"reason": "…"}` (1 to 2000 characters). The chairman or an operator may cancel any task of the tenant; anyone else only one they queued or delegated (403). Running sub-tasks lose their lease and their budget reservation. Audited (`task.cancel`, with the ids cascaded to), and announced as TASK_UPDATED for each task.',
    document: CancelTaskRoute,
    variables: { id: fromPath('id'), reason: fromBody('reason') },
    status: 200,
    respond: (data) => ({ data: data.cancelTask }),
    responseSchema: z.object({ data: taskTreeResponse }),
    example: { reason: 'The board changed its mind.' },
    responseExample: { data: { ...waitingRoot, status: 'cancelled' } },
    errors: {
      403: 'The caller is neither chairman nor operator and did not queue the task.',
      404: 'No task of the caller’s tenant has this id.',
      409: 'The task already ended (`task_ended`).',
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/tasks/{id}/accept',
    tag: 'agents',
    summary: 'Accept a task in review: it is completed',
    description:
      'Body `{}` or `{"note": "…"}` (1 to 2000 characters). For a task `in_review` (its role’s completion policy names a reviewer role): a member, an operator, the chairman or an agent working for the reviewer role, never the agent whose completion it is. The task becomes `completed`, its `finished_at` still its agent’s completion, and counts in vitals and outcomes from then on. Audited (`task.review.accept`), a run-record step, and TASK_UPDATED. See docs/reviews.md.',
    document: AcceptTaskRoute,
    variables: { id: fromPath('id'), note: fromBody('note') },
    status: 200,
    respond: (data) => ({ data: data.acceptTask }),
    responseSchema: z.object({ data: taskReviewResponse }),
    example: { note: 'Figures match the ledger.' },
    responseExample: {
      data: reviewedTask('completed', {
        status: 'accepted',
        note: 'Figures match the ledger.',
        outcome: null,
      }),
    },
    errors: REVIEW_ERRORS,
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/tasks/{id}/reject',
    tag: 'agents',
    summary: 'Reject a task in review: back to the queue, or failed on its last attempt',
    description:
      'Body `{"reason": "…"}` (1 to 2000 characters, required). Who may: as for accept. The task returns to its role’s queue (`pending`, no claimer, its attempts kept, the reason in `review.note` for the next claim), or is `failed` when that completion was its last attempt (`review.outcome` says which). Its cost stays charged. Audited (`task.review.reject`), a run-record step, and TASK_UPDATED.',
    document: RejectTaskRoute,
    variables: { id: fromPath('id'), reason: fromBody('reason') },
    status: 200,
    respond: (data) => ({ data: data.rejectTask }),
    responseSchema: z.object({ data: taskReviewResponse }),
    example: { reason: 'The Q3 total leaves out the Berlin office.' },
    responseExample: {
      data: reviewedTask('pending', {
        status: 'rejected',
        note: 'The Q3 total leaves out the Berlin office.',
        outcome: 'pending',
      }),
    },
    errors: REVIEW_ERRORS,
  }),
];
