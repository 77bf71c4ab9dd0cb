import type { Role } from '../../src/generated/dashboard/graphql.js';

/**
 * What the console offers a viewer, from the roles of its token (`me { roles }`). It only decides what the
 * page shows: the server checks every operation again, and the page shows its refusal when it differs.
 * The product's role rules: pause and resume, and budgets, chairman; the approval inbox, chairman and
 * operator (each request decided by the roles of its approverRoles); decisions on recommendations, member,
 * operator or chairman.
 */
export interface Abilities {
  /** Pause and resume C-suite agents: the chairman. */
  pauseAgents: boolean;
  /** Set the roles' budgets: the chairman. */
  setBudgets: boolean;
  /** Read the approval inbox (and its events): chairman or operator. Members see nothing of it. */
  readApprovals: boolean;
  /** Accept or reject recommendations and record their outcomes: member, operator or chairman. */
  decideRecommendations: boolean;
}

/** The roles that may open the console: people, not agent runtimes. */
const PEOPLE: readonly Role[] = ['chairman', 'operator', 'member'];

export function abilitiesOf(roles: readonly Role[]): Abilities {
  return {
    pauseAgents: roles.includes('chairman'),
    setBudgets: roles.includes('chairman'),
    readApprovals: roles.includes('chairman') || roles.includes('operator'),
    decideRecommendations: roles.some((role) => PEOPLE.includes(role)),
  };
}

/** Whether a viewer may decide a request that names these approver roles (the connector's policy). */
export const mayDecideApproval = (roles: readonly Role[], approverRoles: readonly string[]) =>
  roles.some((role) => approverRoles.includes(role));

/** Whether a token with these roles may open the console at all. */
export const maySeeConsole = (roles: readonly Role[]) => roles.some((role) => PEOPLE.includes(role));
