import type { TypedDocumentString } from '../../src/generated/dashboard/graphql.js';

/** A GraphQL error the server answered with: its message and code (UNAUTHENTICATED, FORBIDDEN, …). */
export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

interface GraphQLResponse<Data> {
  data?: Data | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/**
 * Runs an operation over HTTP with the token; throws the first GraphQL error. `extra` variables are sent
 * beside the document's own (the server ignores them, the response cache keys on them): a read caused by
 * an event names the event, so no result stored before it can answer.
 */
export async function request<Data, Variables>(
  token: string,
  document: TypedDocumentString<Data, Variables>,
  variables: Variables,
  extra: Record<string, string> = {},
): Promise<Data> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query: document.toString(), variables: { ...variables, ...extra } }),
  });
  let body: GraphQLResponse<Data>;
  try {
    body = (await response.json()) as GraphQLResponse<Data>;
  } catch {
    throw new GraphQLRequestError(`The server answered HTTP ${response.status}`, undefined);
  }
  const error = body.errors?.[0];
  if (error || !body.data) {
    throw new GraphQLRequestError(error?.message ?? `HTTP ${response.status}`, error?.extensions?.code);
  }
  return body.data;
}

/** Why the page cannot use a token, in words for the person holding it. */
export type TokenProblem = {
  kind: 'expired' | 'invalid' | 'underprivileged' | 'signed-out';
  message: string;
};

/**
 * A refused token as the server explained it: its 401 messages say "Token has expired" for an expired one
 * and name what failed for any other (src/auth/tokens.ts).
 */
export function tokenProblemOf(serverMessage: string): TokenProblem {
  if (/expired/i.test(serverMessage)) {
    return {
      kind: 'expired',
      message: 'Your token has expired. Paste a new one (npm run token prints one) to go on.',
    };
  }
  return {
    kind: 'invalid',
    message: `This token was refused: ${serverMessage.replace(/\.$/, '')}. Check that you copied all of it, and that it was made for this server.`,
  };
}
