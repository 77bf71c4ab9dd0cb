import type { z } from 'zod';
import { INVALID_SIGNATURE } from '../src/auth/tokens.js';
import { loadConfig } from '../src/config.js';
import { unknownAgentRole } from '../src/domain/agents/registry.js';
import { C_SUITE_ROLES } from '../src/domain/agents/roles.js';
import { forbidden } from '../src/domain/errors.js';
import { abTestNotFound } from '../src/domain/experiments/lifecycle.js';
import { serviceUnavailable } from '../src/errors.js';
import { payloadTooLarge } from '../src/http/body.js';
import { snakeCase } from '../src/validation/schema-walk.js';

/**
 * Example bodies of the /api/v1 error answers for the OpenAPI document: `{"detail"}` texts by name.
 * Where the code that builds an answer exports the function that builds it, the example is made by that
 * function; the others are written as the routes answer them. test/rest/openapi-examples.test.ts provokes
 * every example it can through the routes and fails on any difference, so neither kind can drift.
 */
export type ErrorExamples = Record<string, string>;

/** The id the examples name (the connector and A/B test examples use it too). */
export const EXAMPLE_ID = '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a';
const EXAMPLE_HOST = 'api.acme-payments.com';

const defaults = loadConfig({});

/** Errors every route answers the same way (the shared responses of the document). */
export const sharedErrorExamples = {
  401: {
    missingToken: 'Not authenticated',
    expiredToken: 'Token has expired',
    anotherSecret: INVALID_SIGNATURE,
  },
  403: { role: forbidden().message },
  405: { method: 'Method Not Allowed' },
  429: { rateLimited: 'Too many requests; retry in 42 s' },
  503: { unavailable: serviceUnavailable(defaults.retryAfterSeconds).message },
} satisfies Record<number, ErrorExamples>;

/** 413 of a route whose body may take `maxBytes`. */
export const payloadTooLargeExample = (maxBytes: number): ErrorExamples => ({
  tooLarge: payloadTooLarge(maxBytes).message,
});

const connectorNotFound = `Connector ${EXAMPLE_ID} not found`;
const connectorCalls: Record<number, ErrorExamples> = {
  404: { unknownConnector: connectorNotFound },
  409: { disabled: `Connector ${EXAMPLE_ID} is disabled; only active connectors are called` },
  502: {
    addressRefused: `Connector call failed: ${EXAMPLE_HOST} resolved to 127.0.0.1, which is a loopback address; outbound connections to it on port 443 are refused`,
  },
  504: {
    headersTimeout: `Connector call failed: ${EXAMPLE_HOST} did not send response headers in time`,
    callDeadline: `Connector call failed: ${EXAMPLE_HOST} did not finish the call within ${defaults.connectorCalls.timeoutMs} ms`,
  },
};
const approvalDecisions: Record<number, ErrorExamples> = {
  404: { unknownApproval: `Approval ${EXAMPLE_ID} not found` },
  409: {
    expired: `Approval ${EXAMPLE_ID} expired at 2026-11-23T09:30:00.000Z; its status is expired`,
    cancelled: `Approval ${EXAMPLE_ID} was cancelled (origin_changed); its status is cancelled`,
  },
};
const taskApprovalNotFound: Record<number, ErrorExamples> = {
  404: { unknownTaskApproval: `Task approval ${EXAMPLE_ID} not found` },
};
/** A review's refusals (docs/reviews.md). */
const taskReviews = {
  403: {
    notReviewer: `Task ${EXAMPLE_ID} is reviewed by the role 'ceo', which this token does not work for`,
  },
  404: { unknownTask: `Task ${EXAMPLE_ID} not found` },
  409: { notInReview: `Task ${EXAMPLE_ID} is running, not in_review` },
};

const taskApprovalDecisions: Record<number, ErrorExamples> = {
  ...taskApprovalNotFound,
  409: {
    expired: `Task approval ${EXAMPLE_ID} expired at 2026-11-23T09:30:00.000Z; its status is expired`,
  },
};
const credentials: Record<number, ErrorExamples> = { 404: { unknownConnector: connectorNotFound } };
const pauseOrResume400: ErrorExamples = {
  notCSuite: `Unknown role 'intern': only the C-suite roles ${C_SUITE_ROLES.join(', ')} can be paused or resumed`,
  notLiveMode: 'Tenant is not in dogfood live mode',
};

/** The state errors of each route, by operationId and status (the statuses its `errors` declare). */
export const routeErrorExamples: Record<string, Record<number, ErrorExamples>> = {
  sendChatMessage: {
    404: { unknownRole: unknownAgentRole('intern').message, unknownThread: `Thread ${EXAMPLE_ID} not found` },
    409: { threadOfAnotherRole: `Thread ${EXAMPLE_ID} belongs to the agent role 'ceo', not 'cfo'` },
  },
  agentVitals: { 404: { unknownRole: unknownAgentRole('intern').message } },
  abTestResults: { 404: { unknownTest: abTestNotFound(EXAMPLE_ID).message } },
  createConnector: {
    409: { nameTaken: "A connector named 'Stripe' already exists (names are compared ignoring case)" },
  },
  readConnector: { 404: { unknownConnector: connectorNotFound } },
  updateConnector: {
    404: { unknownConnector: connectorNotFound },
    409: { nameTaken: "A connector named 'Stripe' already exists (names are compared ignoring case)" },
    412: { staleVersion: `Connector ${EXAMPLE_ID} is at version 3, not 2; read it again before editing` },
  },
  readConnectorCredential: credentials,
  setConnectorCredential: {
    ...credentials,
    503: {
      notConfigured:
        'Connector credentials cannot be stored or used: CONNECTOR_SECRETS_KEY is not set (see docs/operations.md, "Connector credentials")',
      ...sharedErrorExamples[503],
    },
  },
  clearConnectorCredential: credentials,
  readConnectorApprovalPolicy: credentials,
  setConnectorApprovalPolicy: {
    ...credentials,
    412: { staleVersion: `Connector ${EXAMPLE_ID} is at version 3, not 2; read it again before editing` },
  },
  clearConnectorApprovalPolicy: {
    ...credentials,
    412: { staleVersion: `Connector ${EXAMPLE_ID} is at version 3, not 2; read it again before editing` },
  },
  readConnectorCallApproval: { 404: { unknownApproval: `Approval ${EXAMPLE_ID} not found` } },
  approveConnectorCall: approvalDecisions,
  rejectConnectorCall: approvalDecisions,
  requestConnectorCallChanges: approvalDecisions,
  readTaskApproval: taskApprovalNotFound,
  approveTaskApproval: taskApprovalDecisions,
  rejectTaskApproval: taskApprovalDecisions,
  requestTaskApprovalChanges: taskApprovalDecisions,
  delegateTask: {
    404: { unknownTask: `Task ${EXAMPLE_ID} not found` },
    409: { notRunning: `Task ${EXAMPLE_ID} is waiting, not running` },
  },
  taskSteps: { 404: { unknownTask: `Task ${EXAMPLE_ID} not found` } },
  acceptTask: taskReviews,
  rejectTask: taskReviews,
  cancelTask: {
    403: { notYours: 'Only the chairman, an operator or whoever queued a task may cancel it' },
    404: { unknownTask: `Task ${EXAMPLE_ID} not found` },
    409: { ended: `Task ${EXAMPLE_ID} is completed: it has already ended` },
  },
  invokeConnector: connectorCalls,
  testConnector: connectorCalls,
  pauseAgent: { 400: pauseOrResume400 },
  resumeAgent: { 400: pauseOrResume400, 409: { notPaused: "Agent role 'cfo' is not paused" } },
  rollbackModel: {
    404: { unknownBaseModel: "Base model 'support-assistant' not found" },
    409: {
      noProduction: 'No production version to roll back',
      nothingToRestore: 'No previous production version to restore before version 1',
    },
  },
};

/** A value with every object key in snake_case, as the REST routes' GraphQL aliases name them. */
function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [snakeCase(key), snakeKeys(item)]));
}

/**
 * A success example from what the domain code computes (`value`, in GraphQL's camelCase), shaped by the
 * route's response schema: the fields it documents, in its order, under their REST names.
 */
export function exampleOf<Schema extends z.ZodType>(schema: Schema, value: unknown): z.output<Schema> {
  return schema.parse(snakeKeys(value));
}
