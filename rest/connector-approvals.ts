import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath, fromQuery } from './route.js';

graphql(`
  fragment ConnectorCallApprovalWire on ConnectorCallApproval {
    id
    connector_id: connectorId
    connector_version: connectorVersion
    method
    path
    status
    approver_roles: approverRoles
    requested_by: requestedBy
    expires_at: expiresAt
    decided_by: decidedBy
    decided_at: decidedAt
    note
    reason
    input
    call {
      outcome
      status
      bytes
      duration_ms: durationMs
      executed_at: executedAt
      failure
      headers
      body
    }
    created_at: createdAt
    updated_at: updatedAt
  }
`);

const ListApprovals = graphql(`
  query ListConnectorCallApprovals(
    $status: ConnectorCallApprovalStatus
    $connectorId: ID
    $first: Int
    $after: String
  ) {
    connectorCallApprovals(status: $status, connectorId: $connectorId, first: $first, after: $after) {
      data: nodes {
        ...ConnectorCallApprovalWire
      }
      next_cursor: nextCursor
    }
  }
`);

const ReadApproval = graphql(`
  query ReadConnectorCallApproval($id: ID!) {
    connectorCallApproval(id: $id) {
      ...ConnectorCallApprovalWire
    }
  }
`);

const Approve = graphql(`
  mutation ApproveConnectorCall($id: ID!, $note: String) {
    approveConnectorCall(id: $id, note: $note) {
      ...ConnectorCallApprovalWire
    }
  }
`);

const Reject = graphql(`
  mutation RejectConnectorCall($id: ID!, $note: String) {
    rejectConnectorCall(id: $id, note: $note) {
      ...ConnectorCallApprovalWire
    }
  }
`);

const RequestChanges = graphql(`
  mutation RequestConnectorCallChanges($id: ID!, $note: String) {
    requestConnectorCallChanges(id: $id, note: $note) {
      ...ConnectorCallApprovalWire
    }
  }
`);

export const approvalResponse = responseSchemaOf(ReadApproval, { id: 'uuid', connector_id: 'uuid' });

export const pendingApprovalExample = {
  id: '5d7c2a10-3b4e-4f6a-9c8d-1e2f3a4b5c6d',
  connector_id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
  connector_version: 2,
  method: 'POST',
  path: '/refunds',
  status: 'pending',
  approver_roles: ['chairman'],
  requested_by: 'agent-cfo',
  expires_at: '2026-11-23T09:30:00.000Z',
  decided_by: null,
  decided_at: null,
  note: null,
  reason: null,
  input: { query: null, body: { charge: 'ch_1', amount: 4200 }, headers: null },
  call: null,
  created_at: '2026-11-22T09:30:00.000Z',
  updated_at: '2026-11-22T09:30:00.000Z',
};

const approvedExample = {
  ...pendingApprovalExample,
  status: 'approved',
  decided_by: 'chair-1',
  decided_at: '2026-11-22T09:41:00.000Z',
  note: 'Refund agreed with the customer',
  call: {
    outcome: 'success',
    status: 201,
    bytes: 27,
    duration_ms: 212,
    executed_at: '2026-11-22T09:41:00.000Z',
    failure: null,
    headers: { 'content-type': 'application/json' },
    body: { id: 're_1', status: 'ok' },
  },
  updated_at: '2026-11-22T09:41:00.000Z',
};

const decisionErrors = {
  404: 'No gated call of the caller’s tenant has this id.',
  409: 'The request expired, or was cancelled because its connector changed (another origin, an edit, a policy change) since it was requested; the message gives its status.',
} as const;

const decide = <Result>(
  verb: string,
  document: TypedDocumentNode<Result, { id: string; note?: string | null }>,
  respond: (data: Result) => unknown,
  summary: string,
  responseExample: unknown,
) =>
  defineRoute({
    method: 'POST',
    path: `/api/v1/forge/approvals/{id}/${verb}`,
    tag: 'connectors',
    summary,
    description:
      'Body `{}` or `{"note": "…"}` (at most 2000 characters). Only a role of the request’s `approver_roles` decides, and never whoever asked, whatever roles the token carries (403 otherwise). A request already decided answers its first decision unchanged (200); audited, and announced as CONNECTOR_CALL_APPROVAL_DECIDED.',
    document,
    variables: { id: fromPath('id'), note: fromBody('note') },
    status: 200,
    respond,
    responseSchema: approvalResponse,
    example: { note: 'Refund agreed with the customer' },
    responseExample,
    errors: decisionErrors,
  });

export const connectorApprovalsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/forge/approvals',
    tag: 'connectors',
    summary: 'The approval inbox: gated connector calls, newest first',
    description:
      'Filters: `status` (pending, approved, rejected, changes_requested, expired, cancelled) and `connector_id`; `limit` 1–100 (default 20), `cursor` = `next_cursor`. Chairman and operator see the tenant’s; an agent only its own; a member is refused (403).',
    document: ListApprovals,
    variables: {
      status: fromQuery('status'),
      connectorId: fromQuery('connector_id'),
      first: fromQuery('limit', 'int'),
      after: fromQuery('cursor'),
    },
    status: 200,
    respond: (data) => data.connectorCallApprovals,
    responseSchema: responseSchemaOf(ListApprovals, { data: z.array(approvalResponse) }),
    responseExample: { data: [pendingApprovalExample], next_cursor: null },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/forge/approvals/{id}',
    tag: 'connectors',
    summary: 'Read one gated call, with its result once approved',
    document: ReadApproval,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.connectorCallApproval,
    responseSchema: approvalResponse,
    responseExample: approvedExample,
    errors: { 404: decisionErrors[404] },
  }),
  decide(
    'approve',
    Approve,
    (data) => data.approveConnectorCall,
    'Approve a gated call: the gateway makes it, exactly once, and keeps its result',
    approvedExample,
  ),
  decide('reject', Reject, (data) => data.rejectConnectorCall, 'Reject a gated call; nothing is sent', {
    ...pendingApprovalExample,
    status: 'rejected',
    decided_by: 'chair-1',
    decided_at: '2026-11-22T09:41:00.000Z',
    note: 'Not this customer',
  }),
  decide(
    'request-changes',
    RequestChanges,
    (data) => data.requestConnectorCallChanges,
    'Send a gated call back to its requester; nothing is sent',
    {
      ...pendingApprovalExample,
      status: 'changes_requested',
      decided_by: 'chair-1',
      decided_at: '2026-11-22T09:41:00.000Z',
      note: 'Refund 40.00, not 42.00',
    },
  ),
];
