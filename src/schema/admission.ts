import type { Context } from '../context.js';
import { releaseAdmission } from '../plugins/use-load-shedding.js';

/**
 * Gives the request's place in the in-flight budget back (use-load-shedding), for work that then waits
 * without the database: a connector call on its upstream (under its own per-tenant slots), a claim waiting
 * for work. GraphQL and REST hold it in the one request yoga runs. Given back once, however often called.
 */
export function releasingAdmission(context: Context): () => void {
  return () => releaseAdmission(context);
}

/** The connector call's options that give the place back right before it first waits on its upstream. */
export function leavingAdmission(context: Context) {
  return { beforeUpstream: releasingAdmission(context) };
}
