import { expect } from 'vitest';
import type { Caller, TestApp } from '../support/app.js';
import { claim, company, ok, REGISTER } from './agents-delegation-support.js';
import { queueTask } from './agents-support.js';

export const SET_POLICY = `mutation SetPolicy($role: String!, $input: BreakerPolicyInput!) {
  setBreakerPolicy(role: $role, input: $input) {
    role custom enabled consecutiveFailures spendWindowMinutes spendLimitUsd spendMultiple maxAttempts
    maxDurationMinutes repeatedCallLimit onDelegationCycle
  }
}`;

export const ROLE = `query Role($role: String!) {
  agent(role: $role) {
    role paused pausedBy pauseReason
    lastBreakerTrip { id kind incidentKey evidence trippedAt }
    breakerPolicy { custom consecutiveFailures maxDurationMinutes repeatedCallLimit spendLimitUsd spendMultiple }
  }
}`;

export const TRIPS = `query Trips($role: String!, $first: Int, $after: String) {
  breakerTrips(role: $role, first: $first, after: $after) { nodes { id kind incidentKey evidence } nextCursor }
}`;

export const PAUSE = `mutation Pause($role: String!, $input: PauseInput!) {
  pauseAgent(role: $role, input: $input) { role paused eventId }
}`;

export const RESUME = `mutation Resume($role: String!, $input: PauseInput!) {
  resumeAgent(role: $role, input: $input) { role paused eventId }
}`;

export const CLAIM_OUTCOME = `mutation ClaimOutcome($role: String!) { claimNextTask(role: $role) { outcome task { id } } }`;

export interface RoleView {
  role: string;
  paused: boolean;
  pausedBy: string | null;
  pauseReason: string | null;
  lastBreakerTrip: {
    id: string;
    kind: string;
    incidentKey: string;
    evidence: Record<string, unknown>;
  } | null;
  breakerPolicy: Record<string, unknown>;
}

/** A company with a registered role `analyst` (reporting to the CFO) whose breakers are set to `policy`. */
export async function companyWithRole(t: TestApp, role: string, policy: Record<string, unknown> = {}) {
  const people = await company(t);
  await ok(t, REGISTER, { input: { role, reportsTo: 'cfo' } }, people.chairman);
  if (Object.keys(policy).length > 0) await ok(t, SET_POLICY, { role, input: policy }, people.chairman);
  return people;
}

export const readRole = async (t: TestApp, caller: Caller, role: string) =>
  (await ok(t, ROLE, { role }, caller)).agent as RoleView;

/** Queues `count` tasks of `role` and claims them all, in order, alternating between the two instances. */
export async function claimed(
  [a, b]: [TestApp, TestApp],
  people: { member: Caller; agent: Caller },
  role: string,
  count: number,
) {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) await queueTask(a, people.member, role, `job ${index}`);
  for (let index = 0; index < count; index += 1)
    ids.push((await claim(index % 2 === 0 ? a : b, people.agent, role)).id);
  return ids;
}

/** The trips of a role, read from the database, oldest first. */
export const tripsOf = (t: TestApp, tenantId: string, role: string) =>
  t.db.prisma.breakerTrip.findMany({ where: { tenantId, role }, orderBy: { trippedAt: 'asc' } });

/**
 * Checks the one trip of `kind` paused `role` through the seed's pause: the role paused by `breaker:<kind>`,
 * one DOGFOOD_AGENT_PAUSED event carrying the breaker and its evidence, one `agent.pause` audit entry with
 * the breaker as the actor and the evidence; a claim refused as `role_paused`. Answers the evidence.
 */
export async function expectTrippedOnce(
  t: TestApp,
  people: { chairman: Caller; agent: Caller; tenantId: string },
  role: string,
  kind: string,
): Promise<Record<string, unknown>> {
  const trips = await tripsOf(t, people.tenantId, role);
  expect(trips.map((trip) => trip.kind)).toEqual([kind]);
  const [trip] = trips;
  const evidence = trip?.evidence as Record<string, unknown>;
  const view = await readRole(t, people.chairman, role);
  expect(view).toMatchObject({ paused: true, pausedBy: `breaker:${kind}` });
  expect(view.lastBreakerTrip).toMatchObject({ id: trip?.id, kind, evidence });
  expect(view.pauseReason).toEqual(expect.any(String));
  const events = await t.db.prisma.outboxEvent.findMany({
    where: { tenantId: people.tenantId, type: 'DOGFOOD_AGENT_PAUSED' },
  });
  expect(events.map((event) => event.payload)).toEqual([
    expect.objectContaining({
      role,
      actor_user_id: `breaker:${kind}`,
      breaker: { kind, trip_id: trip?.id, evidence },
    }),
  ]);
  const audit = await t.db.prisma.auditEntry.findMany({
    where: { tenantId: people.tenantId, action: 'agent.pause' },
  });
  expect(audit).toHaveLength(1);
  expect(audit[0]).toMatchObject({ actor: `breaker:${kind}`, outcome: 'paused', targetId: role });
  expect(audit[0]?.details).toMatchObject({ breaker: { kind, trip_id: trip?.id, evidence } });
  const refused = await ok(t, CLAIM_OUTCOME, { role }, people.agent);
  expect(refused.claimNextTask).toEqual({ outcome: 'role_paused', task: null });
  return evidence;
}

/** The chairman resumes the role with one call (no live mode needed after a breaker's pause). */
export async function resume(t: TestApp, chairman: Caller, role: string) {
  const resumed = await ok(t, RESUME, { role, input: { actorUserId: 'chair-1' } }, chairman);
  expect(resumed.resumeAgent).toMatchObject({ role, paused: false });
}
