import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath, fromQuery } from './route.js';

graphql(`
  fragment TaskApprovalWire on TaskApproval {
    id
    task_id: taskId
    role
    summary
    payload
    status
    requested_by: requestedBy
    decided_by: decidedBy
    decided_at: decidedAt
    note
    created_at: createdAt
  }
`);

const ListTaskApprovals = graphql(`
  query ListTaskApprovals($status: TaskApprovalStatus, $role: String, $first: Int, $after: String) {
    taskApprovals(status: $status, role: $role, first: $first, after: $after) {
      data: nodes {
        ...TaskApprovalWire
      }
      next_cursor: nextCursor
    }
  }
`);

const ReadTaskApproval = graphql(`
  query ReadTaskApproval($id: ID!) {
    taskApproval(id: $id) {
      ...TaskApprovalWire
    }
  }
`);

const ApproveTask = graphql(`
  mutation ApproveTaskApproval($id: ID!, $note: String) {
    approveTaskApproval(id: $id, note: $note) {
      ...TaskApprovalWire
    }
  }
`);

const RejectTask = graphql(`
  mutation RejectTaskApproval($id: ID!, $note: String) {
    rejectTaskApproval(id: $id, note: $note) {
      ...TaskApprovalWire
    }
  }
`);

const RequestTaskChanges = graphql(`
  mutation RequestTaskApprovalChanges($id: ID!, $note: String) {
    requestTaskApprovalChanges(id: $id, note: $note) {
      ...TaskApprovalWire
    }
  }
`);

const taskApprovalResponse = responseSchemaOf(ReadTaskApproval, { id: 'uuid', task_id: 'uuid' });

const pendingExample = {
  id: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
  task_id: '1f2e3d4c-5b6a-4978-8a6b-5c4d3e2f1a0b',
  role: 'cfo',
  summary: 'Send this offer',
  payload: { amount: 1200 },
  status: 'pending',
  requested_by: 'agent-cfo',
  decided_by: null,
  decided_at: null,
  note: null,
  created_at: '2026-11-22T09:30:00.000Z',
};

const decided = (status: string, note: string) => ({
  ...pendingExample,
  status,
  decided_by: 'chair-1',
  decided_at: '2026-11-22T09:41:00.000Z',
  note,
});

const decide = <Result>(
  verb: string,
  document: TypedDocumentNode<Result, { id: string; note?: string | null }>,
  respond: (data: Result) => unknown,
  summary: string,
  note: string,
  status: string,
) =>
  defineRoute({
    method: 'POST',
    path: `/api/v1/task-approvals/{id}/${verb}`,
    tag: 'agents',
    summary,
    description:
      'Body `{}` or `{"note": "…"}` (at most 2000 characters; required to reject: it says why). Chairman or operator, never whoever asked, whatever roles the token carries (403). The task returns to the queue (`pending`) with the decision attached. A request already decided answers its first decision unchanged (200); one nobody decided before it expired answers 409 with its status and changes nothing. Audited, and announced as TASK_APPROVAL_DECIDED.',
    document,
    variables: { id: fromPath('id'), note: fromBody('note') },
    status: 200,
    respond,
    responseSchema: taskApprovalResponse,
    example: { note },
    responseExample: decided(status, note),
    errors: {
      404: 'No decision request of the caller’s tenant has this id.',
      409: 'The request expired before anyone decided (the task is back in the queue); the message gives its status.',
    },
  });

/** The inbox of decisions agents asked for on their tasks, beside the connector call approvals. */
export const taskApprovalsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/task-approvals',
    tag: 'agents',
    summary: 'Decisions agents asked for on their tasks, newest first',
    description:
      'Filters: `status` (pending, approved, rejected, changes_requested, expired: a request still pending past its expiry reads as expired) and `role`; `limit` 1–100 (default 20), `cursor` = `next_cursor`. Chairman and operator see the tenant’s; an agent only its own; a member is refused (403).',
    document: ListTaskApprovals,
    variables: {
      status: fromQuery('status'),
      role: fromQuery('role'),
      first: fromQuery('limit', 'int'),
      after: fromQuery('cursor'),
    },
    status: 200,
    respond: (data) => data.taskApprovals,
    responseSchema: responseSchemaOf(ListTaskApprovals, { data: z.array(taskApprovalResponse) }),
    responseExample: { data: [pendingExample], next_cursor: null },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/task-approvals/{id}',
    tag: 'agents',
    summary: 'Read one decision request',
    document: ReadTaskApproval,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.taskApproval,
    responseSchema: taskApprovalResponse,
    responseExample: decided('approved', 'Go ahead'),
    errors: { 404: 'No decision request of the caller’s tenant has this id (an agent reads only its own).' },
  }),
  decide(
    'approve',
    ApproveTask,
    (data) => data.approveTaskApproval,
    'Approve a task’s decision request',
    'Go ahead',
    'approved',
  ),
  decide(
    'reject',
    RejectTask,
    (data) => data.rejectTaskApproval,
    'Reject a task’s decision request, saying why',
    'Too generous',
    'rejected',
  ),
  decide(
    'request-changes',
    RequestTaskChanges,
    (data) => data.requestTaskApprovalChanges,
    'Send a task’s decision request back for changes',
    'Offer 1000 instead',
    'changes_requested',
  ),
];
