import {
  A2A_PROTOCOL_VERSION,
  type AgentCard,
  AgentCard as AgentCardCodec,
  type SecurityScheme,
} from '@a2a-js/sdk';
import type { A2aAgentRoleQuery } from '../src/generated/graphql/graphql.js';
import { REST_SEGMENT } from './rest-routes.js';

/** The path of a role's A2A endpoint: the tenant and the role name it, as the card's interface does. */
export const a2aPathOf = (tenantId: string, role: string) =>
  `/a2a/${encodeURIComponent(tenantId)}/${encodeURIComponent(role)}`;

/** Where the authentication the card declares comes from. */
export interface CardAuth {
  /** The external identity provider's issuer (OpenID Connect discovery), when one is configured. */
  issuer: string | undefined;
}

function securityOf(auth: CardAuth): Pick<AgentCard, 'securitySchemes' | 'securityRequirements'> {
  const securitySchemes: Record<string, SecurityScheme> = {
    bearer: {
      scheme: {
        $case: 'httpAuthSecurityScheme',
        value: {
          scheme: 'Bearer',
          bearerFormat: 'JWT',
          description:
            'A Boardroom token of the tenant (docs/tokens.md), the same one its REST and MCP faces take.',
        },
      },
    },
  };
  if (auth.issuer) {
    securitySchemes.identityProvider = {
      scheme: {
        $case: 'openIdConnectSecurityScheme',
        value: {
          openIdConnectUrl: `${auth.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
          description: 'An access token of the configured identity provider for this tenant.',
        },
      },
    };
  }
  return {
    securitySchemes,
    // Either scheme alone is enough.
    securityRequirements: Object.keys(securitySchemes).map((name) => ({ schemes: { [name]: { list: [] } } })),
  };
}

/**
 * A role's Agent Card. Anonymous callers get it without skills and with a generic description, the same for
 * any tenant and role, whether they exist or not: discovery tells nobody what a tenant has. The tenant's own
 * callers (GetExtendedAgentCard, or the well-known path with a token) get the role's skill.
 */
export function agentCardOf(
  origin: string,
  tenantId: string,
  role: string,
  auth: CardAuth,
  agent?: NonNullable<A2aAgentRoleQuery['agent']>,
): Record<string, unknown> {
  const name = agent?.displayName ?? agent?.role.toUpperCase() ?? role;
  const card: AgentCard = {
    name: agent ? `${name} (Boardroom)` : 'Boardroom agent role',
    description: agent
      ? `The ${name} of a Boardroom tenant's board of agents: a message becomes a task in its queue, run by the agent runtime that claims it; its output is the task's artifact.${agent.paused ? ' The role is paused: its tasks wait, submitted, until it is resumed.' : ''}`
      : 'An agent role of a Boardroom tenant. Authenticate for its skills (GetExtendedAgentCard).',
    supportedInterfaces: [
      {
        url: `${origin}${a2aPathOf(tenantId, role)}`,
        protocolBinding: 'JSONRPC',
        tenant: tenantId,
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
      {
        url: `${origin}${a2aPathOf(tenantId, role)}/${REST_SEGMENT}`,
        protocolBinding: 'HTTP+JSON',
        tenant: tenantId,
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: { organization: 'Boardroom', url: origin },
    version: '1.0.0',
    documentationUrl: undefined,
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
    ...securityOf(auth),
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: agent
      ? [
          {
            id: agent.role,
            name,
            description: `Work for the ${name}${agent.reportsTo ? `, who reports to the ${agent.reportsTo.toUpperCase()}` : ''}${agent.reports.length > 0 ? ` and may delegate to ${agent.reports.map((report) => report.role.toUpperCase()).join(', ')}` : ''}.`,
            tags: [agent.role],
            examples: [],
            inputModes: ['text/plain'],
            outputModes: ['text/plain'],
            securityRequirements: [],
          },
        ]
      : [],
    signatures: [],
    iconUrl: undefined,
  };
  return AgentCardCodec.toJSON(card) as Record<string, unknown>;
}
