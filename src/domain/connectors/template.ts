import { normalizeBaseUrl } from './base-url.js';
import type { ConnectorAuthType, ConnectorHttpMethod } from './endpoint-path.js';

export const CONNECTOR_STATUSES = ['active', 'disabled'] as const;

export const CONNECTOR_NAME_MAX_LENGTH = 100;
export const CONNECTOR_DESCRIPTION_MAX_LENGTH = 2000;
export const CONNECTOR_MAX_ENDPOINTS = 100;

type JsonObject = Record<string, unknown>;

/** A validated connector template as the API receives it (camelCase, optional parts absent or null). */
export interface ConnectorTemplateInput {
  name: string;
  baseUrl: string;
  authType: ConnectorAuthType;
  description?: string | null | undefined;
  endpoints?: ConnectorEndpointInput[] | null | undefined;
  rateLimits?: RateLimitsInput | null | undefined;
}

export interface ConnectorEndpointInput {
  method: ConnectorHttpMethod;
  path: string;
  bodySchema?: JsonObject | null | undefined;
  queryParams?: JsonObject | null | undefined;
  responseSchema?: JsonObject | null | undefined;
}

export interface RateLimitsInput {
  perMinute?: number | null | undefined;
  perHour?: number | null | undefined;
  perDay?: number | null | undefined;
}

/**
 * The template as stored and shown to every client: the REST spelling (snake_case keys), with only the
 * optional parts that were given.
 */
export interface StoredConnectorTemplate {
  name: string;
  base_url: string;
  auth_type: ConnectorAuthType;
  description?: string;
  endpoints?: StoredConnectorEndpoint[];
  rate_limits?: StoredRateLimits;
}

export interface StoredConnectorEndpoint {
  method: ConnectorHttpMethod;
  path: string;
  body_schema?: JsonObject;
  query_params?: JsonObject;
  response_schema?: JsonObject;
}

export interface StoredRateLimits {
  per_minute?: number;
  per_hour?: number;
  per_day?: number;
}

/** Copies the entries whose value is neither null nor undefined. */
function present<T extends Record<string, unknown>>(entries: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(
    Object.entries(entries).filter(([, value]) => value !== null && value !== undefined),
  ) as {
    [K in keyof T]?: NonNullable<T[K]>;
  };
}

export function toStoredTemplate(input: ConnectorTemplateInput): StoredConnectorTemplate {
  const endpoints = input.endpoints?.map(
    (endpoint): StoredConnectorEndpoint => ({
      method: endpoint.method,
      path: endpoint.path,
      ...present({
        body_schema: endpoint.bodySchema,
        query_params: endpoint.queryParams,
        response_schema: endpoint.responseSchema,
      }),
    }),
  );
  const rateLimits = input.rateLimits
    ? present({
        per_minute: input.rateLimits.perMinute,
        per_hour: input.rateLimits.perHour,
        per_day: input.rateLimits.perDay,
      })
    : undefined;
  return {
    name: input.name,
    base_url: normalizeBaseUrl(input.baseUrl),
    auth_type: input.authType,
    ...present({ description: input.description, endpoints, rate_limits: rateLimits }),
  };
}

const RATE_LIMIT_ORDER = ['perMinute', 'perHour', 'perDay'] as const;
const RATE_LIMIT_WIRE_NAMES: Record<(typeof RATE_LIMIT_ORDER)[number], string> = {
  perMinute: 'per_minute',
  perHour: 'per_hour',
  perDay: 'per_day',
};

export interface RateLimitViolation {
  /** The larger window, where the problem is reported. */
  field: (typeof RATE_LIMIT_ORDER)[number];
  message: string;
}

/**
 * Finds rate limits where a longer window allows fewer requests than a shorter one (per_minute ≤ per_hour ≤
 * per_day among the limits given). Each offending longer window is reported once, against the first shorter
 * window that exceeds it.
 */
export function checkRateLimitOrder(limits: RateLimitsInput): RateLimitViolation[] {
  const violations: RateLimitViolation[] = [];
  RATE_LIMIT_ORDER.forEach((larger, index) => {
    const largerValue = limits[larger];
    if (typeof largerValue !== 'number') return;
    const smaller = RATE_LIMIT_ORDER.slice(0, index).find((field) => {
      const value = limits[field];
      return typeof value === 'number' && value > largerValue;
    });
    if (smaller === undefined) return;
    violations.push({
      field: larger,
      message: `${RATE_LIMIT_WIRE_NAMES[larger]} (${largerValue}) must be at least ${RATE_LIMIT_WIRE_NAMES[smaller]} (${limits[smaller]})`,
    });
  });
  return violations;
}
