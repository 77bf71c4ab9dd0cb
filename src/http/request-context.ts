import type { Authentication } from '../auth/tokens.js';

/**
 * What the intake learns of one request, kept on the request's own context: yoga's server context for that
 * request (node:http's `{ req, res }`, graphql-ws's `{ viewer }` for one operation), the very object that
 * becomes the GraphQL context. Not in module-level maps keyed by the request: the state lives and dies with
 * the request, and a reader sees where it is.
 */
export interface RequestState {
  /** The verification of the request's credential, asked once (src/auth/request.ts, `authenticate`). */
  authentication?: Promise<Authentication>;
  /** Its outcome, once decided. */
  authenticated?: Authentication;
  /** The body limit decided when the request arrived (useBodyLimit). */
  bodyLimit?: number;
  /** Spool files of the files a multipart request sent (useUploads), removed once it is answered. */
  spooled?: string[];
}

const STATE = Symbol('request state');

/** The state of the request whose server context (or GraphQL context) this is, made on first use. */
export function requestStateOf(context: object): RequestState {
  // A batch's operations each get a context made from the request's (Object.create): they read its state.
  const holder = context as { [STATE]?: RequestState };
  holder[STATE] ??= {};
  return holder[STATE];
}

/**
 * A piece of one plugin's own state of a request (when it started, what it admitted), kept on the request's
 * context under a key of its own, as `requestStateOf` keeps the intake's.
 */
export function requestSlot<T>(name: string): {
  get(context: object): T | undefined;
  set(context: object, value: T | undefined): void;
} {
  const key = Symbol(name);
  return {
    get: (context) => (context as Record<symbol, T | undefined>)[key],
    set: (context, value) => {
      (context as Record<symbol, T | undefined>)[key] = value;
    },
  };
}
