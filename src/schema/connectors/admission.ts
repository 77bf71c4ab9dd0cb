import type { Context, ServerContext } from '../../context.js';
import { releaseAdmission } from '../../plugins/use-load-shedding.js';

/**
 * Gives the request's place in the in-flight budget back (use-load-shedding): a connector call waits on
 * its upstream under its own per-tenant slots, not on the budget that protects the database. Over REST
 * the route's own request holds the place.
 */
export function leavingAdmission(context: Context) {
  const { request, restRequest } = context as Context & ServerContext & { request?: Request };
  return {
    beforeUpstream() {
      for (const held of [request, restRequest]) if (held) releaseAdmission(held);
    },
  };
}
