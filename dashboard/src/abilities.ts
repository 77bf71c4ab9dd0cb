import type { Role } from '../../src/generated/dashboard/graphql.js';

/**
 * What the console offers a viewer, from the roles of its token (`me { roles }`). It only decides what the
 * page shows: the server checks every operation again, and the page shows its refusal when it differs.
 * The product's role rules: pause and resume, chairman; decisions on recommendations, member, operator or
 * chairman.
 */
export interface Abilities {
  /** Pause and resume C-suite agents: the chairman. */
  pauseAgents: boolean;
  /** Accept or reject recommendations and record their outcomes: member, operator or chairman. */
  decideRecommendations: boolean;
}

/** The roles that may open the console: people, not agent runtimes. */
const PEOPLE: readonly Role[] = ['chairman', 'operator', 'member'];

export function abilitiesOf(roles: readonly Role[]): Abilities {
  return {
    pauseAgents: roles.includes('chairman'),
    decideRecommendations: roles.some((role) => PEOPLE.includes(role)),
  };
}

/** Whether a token with these roles may open the console at all. */
export const maySeeConsole = (roles: readonly Role[]) => roles.some((role) => PEOPLE.includes(role));
