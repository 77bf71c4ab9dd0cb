import { Cron } from 'croner';
import { Refusal } from '../errors.js';

/** What a routine does with occurrences no tick handled in time (docs/routines.md, "Catch-up"). */
export type CatchUp = 'skip' | 'run_once';
export const CATCH_UPS: readonly CatchUp[] = ['skip', 'run_once'];

/**
 * How late a tick may handle an occurrence and still run it as scheduled: one seen later was missed (the
 * instances were down or the routine's tick fell behind) and follows the routine's catch-up rule.
 */
export const ON_TIME_GRACE_MS = 60_000;

/** Occurrences counted one by one after a downtime at most; `missedCount` stops there. */
export const MAX_COUNTED_OCCURRENCES = 1_000;

/** A refused schedule: BAD_USER_INPUT with the reason, at `input.<field>`. */
export const scheduleRefusal = (field: string, reason: string, message: string, input: unknown) =>
  new Refusal('BAD_USER_INPUT', message, {
    reason,
    facts: { detail: [{ type: reason, loc: ['input', field], msg: message, input }] },
  });

/** Whether the runtime knows `timeZone` as an IANA time zone. */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * A routine's schedule: five cron fields (minute hour day-of-month month day-of-week, or a nickname such
 * as `@daily`) read in an IANA time zone. Refuses, as BAD_USER_INPUT with a reason: a sixth field
 * (`cron_seconds_not_supported`), a time zone the runtime does not know (`unknown_time_zone`), any other
 * pattern croner refuses or one that never fires (`cron_invalid`).
 */
export function parseSchedule(cron: string, timeZone: string): Cron {
  if (!isKnownTimeZone(timeZone)) {
    throw scheduleRefusal('timeZone', 'unknown_time_zone', `Unknown time zone '${timeZone}'`, timeZone);
  }
  const fields = cron.trim().split(/\s+/);
  if (!cron.trim().startsWith('@')) {
    if (fields.length === 6 || fields.length === 7) {
      throw scheduleRefusal(
        'cron',
        'cron_seconds_not_supported',
        'A routine’s schedule has five fields (minute hour day-of-month month day-of-week): seconds and years are not supported',
        cron,
      );
    }
    if (fields.length !== 5) {
      throw scheduleRefusal(
        'cron',
        'cron_invalid',
        `A cron expression has five fields separated by spaces; '${cron}' has ${fields.length}`,
        cron,
      );
    }
  }
  let schedule: Cron;
  try {
    schedule = new Cron(cron.trim(), { timezone: timeZone, mode: '5-part', paused: true });
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    throw scheduleRefusal('cron', 'cron_invalid', `Invalid cron expression '${cron}': ${why}`, cron);
  }
  if (schedule.nextRun(new Date()) === null) {
    throw scheduleRefusal('cron', 'cron_invalid', `The cron expression '${cron}' never fires`, cron);
  }
  return schedule;
}

/** The first occurrence strictly after `after`, or null when the schedule has none. */
export function nextOccurrence(schedule: Cron, after: Date): Date | null {
  return schedule.nextRun(after);
}

/** What a tick does with a routine whose next occurrence is due. */
export interface OccurrencePlan {
  /** The occurrence to run (queue a task for, or skip with the role's or budget's reason); null: none. */
  run: Date | null;
  /** Occurrences recorded as one `missed` row: the first of them and how many; null: none. */
  missed: { first: Date; count: number } | null;
  /** The latest due occurrence: what `lastRunAt` becomes. */
  latest: Date;
  /** The next occurrence after `now`; null when the schedule has no more. */
  next: Date | null;
}

/**
 * Plans a tick at `now` for a routine whose next occurrence `due` is at or before `now`. The latest due
 * occurrence runs when the tick is at most `graceMs` late for it; the occurrences before it were missed
 * (one `missed` row). When even the latest is late, every due occurrence was missed: `skip` records them
 * as one `missed` row and runs none; `run_once` runs the latest and records the others as one row.
 */
export function planOccurrences(
  schedule: Cron,
  due: Date,
  now: Date,
  catchUp: CatchUp,
  graceMs = ON_TIME_GRACE_MS,
): OccurrencePlan {
  let latest = due;
  let count = 1;
  let next = schedule.nextRun(due);
  while (next !== null && next.getTime() <= now.getTime() && count < MAX_COUNTED_OCCURRENCES) {
    latest = next;
    count += 1;
    next = schedule.nextRun(next);
  }
  if (next !== null && next.getTime() <= now.getTime()) {
    // Counted as many as we count: jump to the latest before now.
    latest = schedule.previousRuns(1, new Date(now.getTime() + 1))[0] ?? latest;
    next = schedule.nextRun(now);
  }
  const onTime = now.getTime() - latest.getTime() <= graceMs;
  if (onTime || catchUp === 'run_once') {
    return { run: latest, missed: count > 1 ? { first: due, count: count - 1 } : null, latest, next };
  }
  return { run: null, missed: { first: due, count }, latest, next };
}
