import type { Context } from '../../context.js';
import { releaseAdmission } from '../../plugins/use-load-shedding.js';

/**
 * Gives the request's place in the in-flight budget back (use-load-shedding): a connector call waits on
 * its upstream under its own per-tenant slots, not on the budget that protects the database. GraphQL and
 * REST hold it in the one request yoga runs.
 */
export function leavingAdmission(context: Context) {
  const { request } = context as Context & { request?: Request };
  return {
    beforeUpstream() {
      if (request) releaseAdmission(request);
    },
  };
}
