import type { Plugin } from 'graphql-yoga';
import { requestIdOf } from '../http/request-id.js';

/** Gives every request an id and echoes it on every response as X-Request-ID. */
export function useRequestId(): Plugin {
  return {
    onRequest({ request }) {
      requestIdOf(request);
    },
    onResponse({ request, response }) {
      response.headers.set('X-Request-ID', requestIdOf(request));
    },
  };
}
