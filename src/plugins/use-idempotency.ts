import type { ExecutionResult, GraphQLError } from 'graphql';
import { type DocumentNode, print } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import type { PrismaClient } from '../db/client.js';
import { Refusal } from '../domain/errors.js';
import { graphQLErrorOf, httpStatusOf } from '../errors.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_REFUSALS,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyOf,
} from '../http/idempotency-key.js';
import {
  claimKey,
  fingerprintOf,
  type IdempotencyScope,
  keepAnswer,
  releaseKey,
  type StoredAnswer,
} from '../infra/idempotency-store.js';
import type { Logger } from '../logger.js';
import { operationOf, parseWithinLimits } from '../validation/document-limits.js';

/** A key's refusal, mapped as every refusal is (its code's status, `extensions.reason`, its headers). */
const refusal = (
  code: 'BAD_REQUEST' | 'BAD_USER_INPUT' | 'CONFLICT',
  { reason, message }: { reason: string; message: string },
  headers?: Record<string, string>,
) => graphQLErrorOf(new Refusal(code, message, { reason, ...(headers ? { headers } : {}) }));
const invalidKey = () => refusal('BAD_REQUEST', IDEMPOTENCY_REFUSALS.invalid);
const reusedKey = () => refusal('BAD_USER_INPUT', IDEMPOTENCY_REFUSALS.reused);
const keyInFlight = () => refusal('CONFLICT', IDEMPOTENCY_REFUSALS.inFlight, { 'Retry-After': '1' });

/**
 * The answer a first request kept, when it may be kept: success, and refusals a retry would meet again
 * (400, 403, 404, 409, 412, 422…). Not kept, so that a retry runs again: an unexpected error (500, or none
 * with a status), an unavailable database or upstream (5xx), a rate limit (429), a streamed result.
 */
function keptAnswerOf(result: ExecutionResult): StoredAnswer | null {
  if (Symbol.asyncIterator in result) return null;
  let httpStatus: number | undefined;
  for (const error of result.errors ?? []) {
    const status = httpStatusOf(error);
    if (status === undefined || status >= 500 || status === 429 || status === 401) return null;
    if (error.extensions?.unexpected) return null;
    httpStatus = Math.max(httpStatus ?? 0, status);
  }
  const json = JSON.parse(JSON.stringify({ data: result.data, errors: result.errors })) as Record<
    string,
    unknown
  >;
  return { result: json, httpStatus: httpStatus ?? 200 };
}

/** A kept answer as a result again, marked replayed (`Idempotent-Replayed: true` on the HTTP answer). */
function replayed(answer: StoredAnswer): ExecutionResult {
  const stored = answer.result as {
    data?: Record<string, unknown> | null;
    errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  };
  const errors: GraphQLError[] | undefined = stored.errors?.map((error) =>
    createGraphQLError(error.message, { path: error.path, extensions: error.extensions }),
  );
  return {
    ...(stored.data !== undefined ? { data: stored.data } : {}),
    ...(errors ? { errors } : {}),
    extensions: { http: { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } },
  };
}

export interface UseIdempotencyOptions {
  prisma: PrismaClient;
  logger: Logger;
}

interface Held {
  scope: IdempotencyScope;
  fingerprint: string;
}

/**
 * `Idempotency-Key` on every side effect (docs/idempotency.md): a mutation sent with the header, by an
 * authenticated caller, runs once per key; the same key and the same request replays the first answer, the
 * same key with another request is refused (422), a duplicate while the first runs is refused (409). It
 * stands at yoga's onParams, which GraphQL over HTTP, every REST route and every MCP tool pass through (each
 * face runs a GraphQL operation): one store, one rule, and a REST retry shares the rule with its GraphQL
 * twin. Queries and subscriptions ignore the header; an anonymous or unauthenticated request never touches
 * the store (it is refused by the operation anyway). After the database budget admitted the request.
 */
export function useIdempotency({ prisma, logger }: UseIdempotencyOptions): Plugin {
  /** Requests that hold a claimed key, until their result is kept (or the key given back). */
  const holding = new WeakMap<Request, Held>();
  /** Requests that ran their keyed operation: one request, one keyed side effect (an MCP call runs reads too). */
  const keyed = new WeakSet<Request>();

  async function giveBack(request: Request) {
    const held = holding.get(request);
    if (!held) return;
    holding.delete(request);
    await releaseKey(prisma, held.scope, held.fingerprint).catch((error: unknown) =>
      logger.warn({ err: error }, 'could not give an idempotency key back; it is free when its lease ends'),
    );
  }

  return {
    async onParams({ params, request, context, setResult }) {
      const header = request.headers.get(IDEMPOTENCY_KEY_HEADER);
      if (header === null || keyed.has(request)) return;
      const viewer = verifiedViewerOf(context);
      if (!viewer || typeof params.query !== 'string') return;
      let document: DocumentNode;
      try {
        document = parseWithinLimits(params.query);
      } catch {
        return; // yoga refuses the document itself
      }
      const operation = operationOf(document, params.operationName);
      if (operation?.operation !== 'mutation') return;
      keyed.add(request);
      const key = idempotencyKeyOf(header);
      if (key === null) throw invalidKey();
      const scope = { tenantId: viewer.tenantId, caller: viewer.sub, key };
      const fingerprint = fingerprintOf(print(document), operation.name?.value ?? null, params.variables);
      const claim = await claimKey(prisma, scope, fingerprint);
      if (claim.kind === 'reused') throw reusedKey();
      if (claim.kind === 'in_flight') throw keyInFlight();
      if (claim.kind === 'done') {
        setResult(replayed(claim.answer));
        return;
      }
      holding.set(request, { scope, fingerprint });
    },
    async onExecutionResult({ result, request }) {
      const held = holding.get(request);
      if (!held) return;
      const answer = Array.isArray(result) ? null : keptAnswerOf(result as ExecutionResult);
      if (!answer) {
        await giveBack(request);
        return;
      }
      holding.delete(request);
      // The side effect happened: a failure to keep its answer is logged, not answered (the key stays held
      // until its lease ends).
      await keepAnswer(prisma, held.scope, held.fingerprint, answer).catch((error: unknown) =>
        logger.error({ err: error }, 'could not keep the answer of an idempotency key'),
      );
    },
    async onResponse({ request }) {
      // The operation threw instead of answering (an unexpected failure): its key is given back.
      await giveBack(request);
    },
  };
}
