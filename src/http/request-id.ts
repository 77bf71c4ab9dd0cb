import { randomUUID } from 'node:crypto';

// By request, not on its context: tracing's request instrumentation, given no context, asks for it first.
const ids = new WeakMap<Request, string>();
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: a valid inbound X-Request-ID is kept, otherwise a new uuid. */
export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (!id) {
    const inbound = request.headers.get('x-request-id');
    id = inbound && acceptable.test(inbound) ? inbound : randomUUID();
    ids.set(request, id);
  }
  return id;
}
