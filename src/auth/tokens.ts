import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Config } from '../config.js';
import { AGENT_ROLE_PATTERN, normalizeRole } from '../domain/agents/roles.js';
import { DomainError } from '../domain/errors.js';
import { textProblem } from '../validation/input-rules.js';
import { TokenCache } from './token-cache.js';
import { ROLES, type Viewer } from './viewer.js';

/** A credential that does not verify: answered 401 with its message, as `unauthenticated` (src/domain/errors.ts). */
export class AuthenticationError extends DomainError {
  override name = 'AuthenticationError';
  readonly code = 'UNAUTHENTICATED';
  override headers() {
    return { 'WWW-Authenticate': 'Bearer' };
  }
}

/** What the credential of one request proved, decided once per request (src/auth/request.ts). */
export type Authentication =
  | { status: 'anonymous' }
  | { status: 'verified'; viewer: Viewer }
  | { status: 'failed'; error: AuthenticationError };

/** Longest `sub` accepted: it is stored as the actor of audit rows, tasks and events. */
export const MAX_SUBJECT_LENGTH = 256;

/** Most agent roles one token may be bound to. */
export const MAX_AGENT_ROLES = 100;

const agentRole = z
  .string()
  .transform(normalizeRole)
  .refine((role) => AGENT_ROLE_PATTERN.test(role), 'agent_roles holds agent role names such as "cfo"');

const claims = z
  .object({
    sub: z
      .string()
      .min(1, 'sub is required')
      .max(MAX_SUBJECT_LENGTH, `sub must be at most ${MAX_SUBJECT_LENGTH} characters`)
      // The subject is stored as text: the same rule as every input (no NUL, no unpaired surrogate).
      .refine((sub) => textProblem(sub) === null, 'sub must be valid text without NUL characters'),
    tenant_id: z.uuid({ error: 'tenant_id must be a uuid' }),
    roles: z.array(z.enum(ROLES)).default([]),
    /** The agent roles an agent token works for; absent, every role of its tenant. */
    agent_roles: z
      .array(agentRole, { error: 'agent_roles must be a list of agent role names' })
      .min(1, 'agent_roles must name at least one agent role')
      .max(MAX_AGENT_ROLES, `agent_roles may name at most ${MAX_AGENT_ROLES} agent roles`)
      .optional(),
  })
  .refine((token) => token.agent_roles === undefined || token.roles.includes('agent'), {
    message: 'agent_roles binds an agent token, and this token has no agent role',
  });

export interface TokenVerifier {
  /** Resolves the viewer of an `Authorization` header value; rejects with AuthenticationError. */
  verify(authorization: string | null | undefined): Promise<Viewer>;
}

export interface TokenVerifierOptions {
  /** Where verified tokens are remembered until their `exp`. Default: a TokenCache of 5000 entries. */
  cache?: TokenCache;
}

export function createTokenVerifier(
  auth: Config['auth'],
  { cache = new TokenCache() }: TokenVerifierOptions = {},
): TokenVerifier {
  const secret = auth.jwtSecret ? new TextEncoder().encode(auth.jwtSecret) : undefined;
  const jwks = auth.jwksUrl ? createRemoteJWKSet(new URL(auth.jwksUrl)) : undefined;
  const options = {
    issuer: auth.issuer,
    audience: auth.audience,
    requiredClaims: ['exp'],
  };

  async function verifyJwt(token: string): Promise<JWTPayload> {
    if (secret) {
      try {
        return (await jwtVerify(token, secret, { ...options, algorithms: ['HS256'] })).payload;
      } catch (error) {
        // With both configured, a token that is not HS256 may still be one of the JWKS keys.
        if (!jwks || !(error instanceof errors.JOSEAlgNotAllowed)) throw error;
      }
    }
    if (jwks) return (await jwtVerify(token, jwks, { ...options, algorithms: ['RS256', 'ES256'] })).payload;
    throw new AuthenticationError('no token verification is configured');
  }

  return {
    async verify(authorization) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
      if (!match?.[1]) {
        throw new AuthenticationError(
          authorization ? 'Authorization must be "Bearer <token>"' : 'Not authenticated',
        );
      }
      const token = match[1];
      const known = cache.get(token);
      if (known) return known;
      let payload: JWTPayload;
      try {
        payload = await verifyJwt(token);
      } catch (error) {
        if (error instanceof AuthenticationError) throw error;
        throw new AuthenticationError(describeJoseError(error));
      }
      const parsed = claims.safeParse(payload);
      if (!parsed.success) throw new AuthenticationError(`Invalid token: ${parsed.error.issues[0]?.message}`);
      // `exp` is a required claim, so verified payloads always carry it.
      const exp = payload.exp as number;
      // Frozen: a cached viewer is shared by every request that presents the same token.
      const viewer: Viewer = Object.freeze({
        sub: parsed.data.sub,
        tenantId: parsed.data.tenant_id.toLowerCase(),
        roles: Object.freeze(parsed.data.roles),
        ...(parsed.data.agent_roles
          ? { agentRoles: Object.freeze([...new Set(parsed.data.agent_roles)].sort()) }
          : {}),
        expiresAt: exp * 1000,
      });
      cache.set(token, viewer, exp);
      return viewer;
    },
  };
}

/**
 * The commonest mistake in development: a token signed for another instance (another DATA_DIR's secret).
 * It says what failed, never with what.
 */
export const INVALID_SIGNATURE =
  "Invalid token: signature verification failed (it was signed with another secret or key than this server's)";

function describeJoseError(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'Token has expired';
  if (error instanceof errors.JWSSignatureVerificationFailed) return INVALID_SIGNATURE;
  if (error instanceof errors.JWTClaimValidationFailed) return `Invalid token: ${error.message}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'Invalid token: algorithm not allowed';
  return 'Invalid token';
}

export interface TokenRequest {
  tenantId: string;
  sub: string;
  roles: readonly string[];
  /** The agent roles an agent token works for (its `agent_roles` claim); absent: every role. */
  agentRoles?: readonly string[] | undefined;
  /** Lifetime such as `1h`, `30m` or `7d`. */
  ttl?: string;
  issuer?: string | undefined;
  audience?: string | undefined;
}

/** Signs an HS256 token with the configured secret (development tokens and `npm run token`). */
export function signToken(secret: string, request: TokenRequest): Promise<string> {
  let jwt = new SignJWT({
    tenant_id: request.tenantId,
    roles: [...request.roles],
    ...(request.agentRoles ? { agent_roles: [...request.agentRoles] } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(request.sub)
    .setIssuedAt()
    .setExpirationTime(request.ttl ?? '1h');
  if (request.issuer) jwt = jwt.setIssuer(request.issuer);
  if (request.audience) jwt = jwt.setAudience(request.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}
