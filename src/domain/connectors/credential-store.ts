import { recordAudit } from '../../audit.js';
import type { Config } from '../../config.js';
import type { Connector, ConnectorCredential, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { Logger } from '../../logger.js';
import type { Actor } from '../actor.js';
import { conflict, invalidInput, notConfigured, notFound, upstreamFailed } from '../errors.js';
import { originOf } from './base-url.js';
import {
  type AccessToken,
  type ConnectorSecret,
  type CredentialRequestParts,
  clientSecrets,
  type FetchAccessToken,
  oauth2TokenRequest,
  readTokenResponse,
  staticRequestParts,
} from './credentials.js';
import { CredentialUnboundError } from './errors.js';
import { redactorOf } from './redaction.js';
import { fingerprintOf, type Keyring, seal, UnsealError, unseal } from './sealing.js';
import type { StoredConnectorTemplate } from './template.js';

const KEY_NOT_SET =
  'Connector credentials cannot be stored or used: CONNECTOR_SECRETS_KEY is not set (see docs/operations.md, "Connector credentials")';

/** The argument name of each credential shape, as GraphQL spells it. */
const INPUT_FIELD: Record<ConnectorSecret['authType'], string> = {
  api_key: 'apiKey',
  bearer: 'bearer',
  basic: 'basic',
  oauth2_client_credentials: 'oauth2ClientCredentials',
};

/** Binds a sealed value to its row: copied to another connector, tenant or auth type, it no longer opens. */
const sealingContext = (tenantId: string, connectorId: string, authType: string) =>
  `connector-credential\n${tenantId}\n${connectorId}\n${authType}`;

const connectorNotFound = (id: string) => notFound(`Connector ${id} not found`);

/** Locks the tenant's connector row (a concurrent template edit waits) and answers its auth_type and origin. */
async function lockConnector(
  tx: Prisma.TransactionClient,
  tenantId: string,
  id: string,
): Promise<{ id: string; authType: string; origin: string }> {
  const [row] = await tx.$queryRaw<{ id: string; auth_type: string; base_url: string }[]>`
    SELECT id::text, template->>'auth_type' AS auth_type, template->>'base_url' AS base_url FROM connectors
    WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (!row) throw connectorNotFound(id);
  return { id: row.id, authType: row.auth_type, origin: originOf(row.base_url) };
}

export interface SetCredentialCommand {
  id: string;
  secret: ConnectorSecret;
}

/**
 * Seals and stores a connector's secret, replacing the one it had (rotation), with an audit row that
 * names the fingerprints, never the secret. The secret's shape must be the template's auth_type; it is
 * bound to the origin of the template's base_url, the only place it will be sent.
 */
export async function setConnectorCredential(
  context: Actor,
  keyring: Keyring,
  { id, secret }: SetCredentialCommand,
): Promise<Connector> {
  const { tenantId, sub } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const connector = await lockConnector(tx, tenantId, id);
    if (connector.authType !== secret.authType) {
      const msg =
        connector.authType === 'none'
          ? `the connector's auth_type is none: it takes no credential`
          : `the connector's auth_type is ${connector.authType}: give ${INPUT_FIELD[connector.authType as ConnectorSecret['authType']]} and nothing else`;
      throw invalidInput([
        {
          type: 'value_error',
          loc: ['input', INPUT_FIELD[secret.authType]],
          msg: `Value error, ${msg}`,
          input: null,
          ctx: { error: msg },
        },
      ]);
    }
    if (keyring.length === 0) throw notConfigured(KEY_NOT_SET);
    const plaintext = JSON.stringify(secret);
    const sealed = seal(keyring, plaintext, sealingContext(tenantId, id, secret.authType));
    const fingerprint = fingerprintOf(keyring, plaintext, id);
    const previous = await tx.connectorCredential.findUnique({
      where: { connectorId: id },
      select: { fingerprint: true },
    });
    const now = new Date();
    const stored = {
      authType: secret.authType,
      keyId: sealed.keyId,
      sealed: sealed.sealed,
      fingerprint,
      origin: connector.origin,
      unboundAt: null,
    };
    await tx.connectorCredential.upsert({
      where: { connectorId: id },
      create: {
        ...stored,
        tenantId,
        connectorId: id,
        createdBy: sub,
        updatedBy: sub,
        createdAt: now,
        updatedAt: now,
      },
      update: { ...stored, updatedBy: sub, updatedAt: now },
    });
    await recordAudit(tx, context, {
      action: 'connector.credential.set',
      targetType: 'connector',
      targetId: id,
      outcome: previous ? 'rotated' : 'set',
      details: {
        auth_type: secret.authType,
        fingerprint,
        key_id: sealed.keyId,
        origin: connector.origin,
        ...(previous ? { previous_fingerprint: previous.fingerprint } : {}),
      },
    });
    return tx.connector.findUniqueOrThrow({ where: { id } });
  });
}

/** Removes a connector's secret, if it has one, with an audit row either way. */
export async function clearConnectorCredential(context: Actor, id: string): Promise<Connector> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    await lockConnector(tx, tenantId, id);
    const removed = await tx.connectorCredential.deleteMany({ where: { connectorId: id, tenantId } });
    await recordAudit(tx, context, {
      action: 'connector.credential.clear',
      targetType: 'connector',
      targetId: id,
      outcome: removed.count > 0 ? 'cleared' : 'absent',
    });
    return tx.connector.findUniqueOrThrow({ where: { id } });
  });
}

/** What credentialRequestParts needs of the running instance. */
export interface CredentialServices {
  prisma: PrismaClient;
  config: Pick<Config, 'connectorSecretsKeys'>;
  logger: Logger;
}

export interface CredentialRequestOptions {
  /**
   * Sends the token request of an oauth2_client_credentials connector (through the guarded egress
   * client). Required for such a connector; not called for the other auth types.
   */
  fetchToken?: FetchAccessToken;
}

/** Access tokens by credential version, reused until shortly before they expire (per instance). */
const accessTokens = new Map<string, AccessToken>();
const MAX_CACHED_TOKENS = 1000;

function opened(
  services: CredentialServices,
  row: ConnectorCredential,
  connector: Pick<Connector, 'id' | 'tenantId'>,
): ConnectorSecret {
  const keyring = services.config.connectorSecretsKeys;
  if (keyring.length === 0) throw notConfigured(KEY_NOT_SET);
  try {
    return JSON.parse(
      unseal(
        keyring,
        { keyId: row.keyId, sealed: row.sealed },
        sealingContext(connector.tenantId, connector.id, row.authType),
      ),
    ) as ConnectorSecret;
  } catch (error) {
    if (!(error instanceof UnsealError)) throw error;
    services.logger.error(
      { connectorId: connector.id, tenantId: connector.tenantId, keyId: row.keyId, reason: error.reason },
      'a connector credential cannot be opened',
    );
    if (error.reason === 'unknown_key') {
      throw notConfigured(
        `The credential of connector ${connector.id} was sealed under key '${row.keyId}', which CONNECTOR_SECRETS_KEY no longer holds; add the key back or set the credential again`,
      );
    }
    throw conflict(
      `The credential of connector ${connector.id} cannot be opened (it fails authentication); set it again`,
    );
  }
}

async function accessToken(
  connector: Pick<Connector, 'id'>,
  row: ConnectorCredential,
  secret: Extract<ConnectorSecret, { authType: 'oauth2_client_credentials' }>,
  fetchToken: FetchAccessToken,
): Promise<string> {
  const cacheKey = `${row.id}\n${row.fingerprint}\n${row.updatedAt.getTime()}`;
  const cached = accessTokens.get(cacheKey);
  if (cached?.reuseUntil && cached.reuseUntil > Date.now()) return cached.token;
  accessTokens.delete(cacheKey);
  const response = await fetchToken(oauth2TokenRequest(secret));
  const token = readTokenResponse(response, Date.now(), redactorOf(clientSecrets(secret)));
  if (typeof token === 'string') {
    throw upstreamFailed(`No access token for connector ${connector.id}: ${token}`);
  }
  if (token.reuseUntil !== null) {
    if (accessTokens.size >= MAX_CACHED_TOKENS) {
      const oldest = accessTokens.keys().next().value;
      if (oldest !== undefined) accessTokens.delete(oldest);
    }
    accessTokens.set(cacheKey, token);
  }
  return token.token;
}

/**
 * Throws why a stored credential may not be used for `connector`'s current template: it was set for
 * another auth_type (CONFLICT), or for another origin than base_url's now, or a change of origin unbound
 * it (CredentialUnboundError). Reads of the credential answer the same reason.
 */
export function assertCredentialUsable(
  row: Pick<ConnectorCredential, 'authType' | 'origin' | 'unboundAt'>,
  connector: Pick<Connector, 'id' | 'template'>,
): void {
  const template = connector.template as unknown as StoredConnectorTemplate;
  if (row.authType !== template.auth_type) {
    throw conflict(
      `The credential of connector ${connector.id} is for auth_type ${row.authType}, the template says ${template.auth_type}; set it again`,
    );
  }
  const origin = originOf(template.base_url);
  if (row.unboundAt !== null || row.origin !== origin) {
    throw new CredentialUnboundError(connector.id, row.origin, origin);
  }
}

/**
 * The headers and query parameters that authenticate an outbound call of `connector` (a row of the
 * caller's tenant): empty for auth_type none; otherwise from the stored secret, opened here and never
 * kept. For oauth2_client_credentials the access token is obtained with `options.fetchToken` and
 * reused until 30 s before its `expires_in`.
 *
 * Throws, as GraphQL errors: CONFLICT (409) when the connector needs a credential and has none, when
 * the stored one was set for another auth_type, or when it fails authentication (altered at rest);
 * CredentialUnboundError (409 at the edge) when it was set for another origin than base_url's, before
 * anything is opened or sent;
 * NOT_CONFIGURED (503) when CONNECTOR_SECRETS_KEY is unset or lacks the key that sealed it;
 * UPSTREAM_FAILED (502) when the token endpoint answers no usable token. What `fetchToken` throws (the
 * egress client's own refusals) propagates unchanged.
 */
export async function credentialRequestParts(
  services: CredentialServices,
  connector: Pick<Connector, 'id' | 'tenantId' | 'template'>,
  options: CredentialRequestOptions = {},
): Promise<CredentialRequestParts> {
  const authType = (connector.template as unknown as StoredConnectorTemplate).auth_type;
  if (authType === 'none') return { headers: {}, query: {}, secrets: [] };
  const row = await services.prisma.connectorCredential.findFirst({
    where: { connectorId: connector.id, tenantId: connector.tenantId },
  });
  if (!row) {
    throw conflict(
      `Connector ${connector.id} has auth_type ${authType} and no credential; set one with setConnectorCredential`,
    );
  }
  assertCredentialUsable(row, connector);
  const secret = opened(services, row, connector);
  if (secret.authType !== 'oauth2_client_credentials') return staticRequestParts(secret);
  if (!options.fetchToken) throw new Error('an oauth2_client_credentials connector needs fetchToken');
  const token = await accessToken(connector, row, secret, options.fetchToken);
  return {
    headers: { authorization: `Bearer ${token}` },
    query: {},
    secrets: [token, ...clientSecrets(secret)],
  };
}

export interface ResealOutcome {
  /** Secrets sealed again under the current key. */
  resealed: number;
  /** Secrets already under the current key. */
  current: number;
  /** Secrets that could not be opened (their key is missing or they fail authentication). */
  unreadable: { connectorId: string; keyId: string; reason: UnsealError['reason'] }[];
}

/**
 * Seals every secret held under an older key again under the current one, keeping its fingerprint and
 * stamps. A secret set meanwhile (newer row) is left as it is: it is already under the current key.
 */
export async function resealConnectorCredentials(
  prisma: PrismaClient,
  keyring: Keyring,
): Promise<ResealOutcome> {
  const current = keyring[0];
  if (!current) throw new Error('CONNECTOR_SECRETS_KEY is not set');
  const outcome: ResealOutcome = {
    resealed: 0,
    current: await prisma.connectorCredential.count({ where: { keyId: current.id } }),
    unreadable: [],
  };
  let after: string | undefined;
  for (;;) {
    const rows = await prisma.connectorCredential.findMany({
      where: { keyId: { not: current.id }, ...(after ? { id: { gt: after } } : {}) },
      orderBy: { id: 'asc' },
      take: 100,
    });
    if (rows.length === 0) return outcome;
    after = rows.at(-1)?.id;
    for (const row of rows) {
      const context = sealingContext(row.tenantId, row.connectorId, row.authType);
      let plaintext: string;
      try {
        plaintext = unseal(keyring, { keyId: row.keyId, sealed: row.sealed }, context);
      } catch (error) {
        if (!(error instanceof UnsealError)) throw error;
        outcome.unreadable.push({ connectorId: row.connectorId, keyId: row.keyId, reason: error.reason });
        continue;
      }
      const sealed = seal(keyring, plaintext, context);
      const updated = await prisma.connectorCredential.updateMany({
        where: { id: row.id, keyId: row.keyId, updatedAt: row.updatedAt },
        data: { keyId: sealed.keyId, sealed: sealed.sealed, updatedAt: row.updatedAt },
      });
      outcome.resealed += updated.count;
    }
  }
}

/** How many stored secrets each key id not in `keyring` sealed: secrets that cannot be opened. */
export async function credentialsUnderMissingKeys(
  prisma: PrismaClient,
  keyring: Keyring,
): Promise<Record<string, number>> {
  const groups = await prisma.connectorCredential.groupBy({
    by: ['keyId'],
    where: { keyId: { notIn: keyring.map((key) => key.id) } },
    _count: { _all: true },
  });
  return Object.fromEntries(groups.map((group) => [group.keyId, group._count._all]));
}
