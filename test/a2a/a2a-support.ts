import { randomUUID } from 'node:crypto';
import { Role, type SendMessageRequest } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import type { RunningServer } from '../../src/server.js';
import type { Caller } from '../support/app.js';

/** A role's A2A base URL (the card is `.well-known/agent-card.json` under it). */
export const roleUrl = (server: RunningServer, tenantId: string, role: string) =>
  `${server.url}/a2a/${tenantId}/${role}/`;

/** fetch with the caller's bearer token on every request (card and JSON-RPC). */
export const fetchAs =
  (caller: Pick<Caller, 'token'> | null): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    if (caller) headers.set('authorization', `Bearer ${caller.token}`);
    return fetch(input, { ...init, headers });
  };

/** The official SDK's client of a role, from its discovered card, calling as `caller`. */
export async function a2aClient(
  server: RunningServer,
  caller: Pick<Caller, 'token'> | null,
  tenantId: string,
  role: string,
): Promise<Client> {
  const fetchImpl = fetchAs(caller);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(roleUrl(server, tenantId, role));
}

/** A SendMessage request of one text part. */
export function textMessage(
  text: string,
  options: { messageId?: string; contextId?: string } = {},
): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: options.messageId ?? randomUUID(),
      contextId: options.contextId ?? '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text', value: text },
          metadata: undefined,
          filename: '',
          mediaType: 'text/plain',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

/** Posts a raw JSON-RPC body to a role's endpoint (what no SDK client would send). */
export async function postA2a(
  server: RunningServer,
  caller: Pick<Caller, 'token'> | null,
  tenantId: string,
  role: string,
  body: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetchAs(caller)(`${server.url}/a2a/${tenantId}/${role}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed };
}
