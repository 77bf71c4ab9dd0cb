import { createHash } from 'node:crypto';
import type { PrismaClient } from '../db/client.js';

/** How long a first answer is kept and replayed (docs/idempotency.md). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a first request holds its key while it runs: longer than any operation may take (a connector
 * call's timeout, a chat message's writes). A request that crashed gives its key up after this.
 */
export const IDEMPOTENCY_LEASE_MS = 2 * 60 * 1000;

/** Whose key it is: keys are scoped to the tenant and the caller (its token's subject). */
export interface IdempotencyScope {
  tenantId: string;
  caller: string;
  key: string;
}

/** A first answer as kept: the operation's result in JSON (data, errors with extensions) and its status. */
export interface StoredAnswer {
  result: Record<string, unknown>;
  httpStatus: number;
}

/** What claiming a key found. */
export type Claim =
  | { kind: 'claimed' }
  /** The key was used for another request (another fingerprint). */
  | { kind: 'reused' }
  /** The first request with the key is still running (within its lease). */
  | { kind: 'in_flight' }
  | { kind: 'done'; answer: StoredAnswer };

/** JSON with its object keys sorted: one text for one value, whatever order a client sent it in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof Blob) {
      // An uploaded file: its name, type and size (its bytes are streamed to disk, never held).
      return { file: (inner as File).name ?? null, type: inner.type, size: inner.size };
    }
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
      return Object.fromEntries(
        Object.keys(inner)
          .sort()
          .map((key) => [key, (inner as Record<string, unknown>)[key]]),
      );
    }
    return inner;
  });
}

/**
 * The request's fingerprint, the same whichever face sent it: sha256 of the operation run (its printed
 * document and operation name) and its variables in canonical JSON. A REST route and an MCP tool run a
 * GraphQL operation, so a retry over REST and its GraphQL twin have one fingerprint.
 */
export function fingerprintOf(document: string, operationName: string | null, variables: unknown): string {
  return createHash('sha256')
    .update(canonicalJson([document, operationName, variables ?? {}]))
    .digest('hex');
}

const scopeWhere = (scope: IdempotencyScope) => ({
  tenantId: scope.tenantId,
  caller: scope.caller,
  key: scope.key,
});

/** What the claim statement answers: `claimed`, or the row that holds the key (judged at `now`). */
interface ClaimRow {
  claimed: boolean;
  fingerprint: string | null;
  status: string | null;
  answer: string | null;
  http_status: number | null;
  /** Expired, or in progress past its lease: free to be taken over. */
  lapsed: boolean | null;
}

/**
 * Claims a key for a request. One statement inserts the row (ON CONFLICT DO NOTHING) or, when the key is
 * held, reads the row that holds it: a first request and a replay (the common retry) each cost one round
 * trip. A row that expired or whose first request gave up its lease is taken over by an update that holds
 * only while that is still so. A row committed after the statement began conflicts without being read: the
 * claim is asked again. Two claims of one key never both succeed.
 */
export async function claimKey(
  prisma: PrismaClient,
  scope: IdempotencyScope,
  fingerprint: string,
  now = new Date(),
): Promise<Claim> {
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
  const lockedUntil = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS);
  const { tenantId, caller, key } = scope;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const [row] = await prisma.$queryRaw<ClaimRow[]>`
      WITH claimed AS (
        INSERT INTO idempotency_keys (tenant_id, caller, key, fingerprint, status, created_at, expires_at, locked_until)
        VALUES (${tenantId}::uuid, ${caller}, ${key}, ${fingerprint}, 'in_progress', ${now}::timestamptz,
                ${expiresAt}::timestamptz, ${lockedUntil}::timestamptz)
        ON CONFLICT DO NOTHING
        RETURNING true AS claimed
      )
      SELECT true AS claimed, NULL::text AS fingerprint, NULL::text AS status, NULL::text AS answer,
             NULL::int AS http_status, NULL::boolean AS lapsed
      FROM claimed
      UNION ALL
      SELECT false, k.fingerprint, k.status, k.answer, k.http_status,
             k.expires_at <= ${now}::timestamptz
               OR (k.status = 'in_progress' AND k.locked_until <= ${now}::timestamptz)
      FROM idempotency_keys AS k
      WHERE k.tenant_id = ${tenantId}::uuid AND k.caller = ${caller} AND k.key = ${key}
        AND NOT EXISTS (SELECT 1 FROM claimed)`;
    // Gone in between (its first request failed, or the sweeper), or committed after the statement began.
    if (!row) continue;
    if (row.claimed) return { kind: 'claimed' };
    if (row.lapsed) {
      const taken = await prisma.idempotencyKey.updateMany({
        where: {
          ...scopeWhere(scope),
          OR: [{ expiresAt: { lte: now } }, { status: 'in_progress', lockedUntil: { lte: now } }],
        },
        data: {
          fingerprint,
          status: 'in_progress',
          answer: null,
          httpStatus: null,
          createdAt: now,
          expiresAt,
          lockedUntil,
        },
      });
      if (taken.count === 1) return { kind: 'claimed' };
      continue;
    }
    if (row.fingerprint !== fingerprint) return { kind: 'reused' };
    if (row.status !== 'done') return { kind: 'in_flight' };
    return {
      kind: 'done',
      answer: {
        result: JSON.parse(row.answer ?? '{}') as Record<string, unknown>,
        httpStatus: row.http_status ?? 200,
      },
    };
  }
  return { kind: 'in_flight' };
}

/** Keeps the first answer of a claimed key: replayed from now on, until the key expires. */
export async function keepAnswer(
  prisma: PrismaClient,
  scope: IdempotencyScope,
  fingerprint: string,
  answer: StoredAnswer,
): Promise<void> {
  await prisma.$executeRaw`
    UPDATE idempotency_keys
    SET status = 'done', answer = ${JSON.stringify(answer.result)}, http_status = ${answer.httpStatus},
        locked_until = NULL
    WHERE tenant_id = ${scope.tenantId}::uuid AND caller = ${scope.caller} AND key = ${scope.key}
      AND fingerprint = ${fingerprint} AND status = 'in_progress'`;
}

/** Gives a claimed key up (its request failed unexpectedly or was refused for a while): a retry runs again. */
export async function releaseKey(
  prisma: PrismaClient,
  scope: IdempotencyScope,
  fingerprint: string,
): Promise<void> {
  await prisma.idempotencyKey.deleteMany({
    where: { ...scopeWhere(scope), fingerprint, status: 'in_progress' },
  });
}

/** Deletes expired keys (reads ignore them already); returns how many. */
export async function sweepIdempotencyKeys(prisma: PrismaClient, now = new Date()): Promise<number> {
  const { count } = await prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lte: now } } });
  return count;
}
