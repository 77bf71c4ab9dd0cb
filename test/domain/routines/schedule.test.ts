import { describe, expect, it } from 'vitest';
import { Refusal } from '../../../src/domain/errors.js';
import {
  MAX_COUNTED_OCCURRENCES,
  parseSchedule,
  planOccurrences,
} from '../../../src/domain/routines/schedule.js';

const reasonOf = (cron: string, timeZone = 'UTC') => {
  try {
    parseSchedule(cron, timeZone);
    return null;
  } catch (error) {
    return error instanceof Refusal ? error.reason : String(error);
  }
};

describe('routine schedules', () => {
  it('accepts five fields and nicknames, read in the time zone', () => {
    expect(reasonOf('0 9 * * 1-5', 'America/New_York')).toBeNull();
    expect(reasonOf('@daily')).toBeNull();
    const schedule = parseSchedule('0 9 * * *', 'America/New_York');
    expect(schedule.nextRun(new Date('2026-07-01T00:00:00Z'))?.toISOString()).toBe(
      '2026-07-01T13:00:00.000Z',
    );
    expect(schedule.nextRun(new Date('2026-12-01T00:00:00Z'))?.toISOString()).toBe(
      '2026-12-01T14:00:00.000Z',
    );
  });

  it('refuses seconds, out-of-range fields, patterns that never fire and unknown time zones, each with its reason', () => {
    expect(reasonOf('0 0 9 * * *')).toBe('cron_seconds_not_supported');
    expect(reasonOf('0 0 9 * * * 2030')).toBe('cron_seconds_not_supported');
    expect(reasonOf('60 * * * *')).toBe('cron_invalid');
    expect(reasonOf('* * 32 * *')).toBe('cron_invalid');
    expect(reasonOf('* * * 13 *')).toBe('cron_invalid');
    expect(reasonOf('0 0 31 2 *')).toBe('cron_invalid');
    expect(reasonOf('2030-01-01T00:00:00')).toBe('cron_invalid');
    expect(reasonOf('0 9 * *')).toBe('cron_invalid');
    expect(reasonOf('0 9 * * *', 'Europe/Atlantis')).toBe('unknown_time_zone');
  });
});

describe('planning a tick', () => {
  const hourly = parseSchedule('0 * * * *', 'UTC');
  const due = new Date('2026-12-03T09:00:00Z');

  it('runs an occurrence handled within the grace', () => {
    expect(planOccurrences(hourly, due, new Date('2026-12-03T09:00:30Z'), 'skip')).toEqual({
      run: due,
      missed: null,
      latest: due,
      next: new Date('2026-12-03T10:00:00Z'),
    });
  });

  it('records earlier occurrences as missed and runs the latest when it is on time', () => {
    const plan = planOccurrences(hourly, due, new Date('2026-12-03T12:00:10Z'), 'skip');
    expect(plan.run).toEqual(new Date('2026-12-03T12:00:00Z'));
    expect(plan.missed).toEqual({ first: due, count: 3 });
  });

  it('skip: every late occurrence is missed; run_once: the latest runs, the rest are missed', () => {
    const now = new Date('2026-12-03T12:30:00Z');
    expect(planOccurrences(hourly, due, now, 'skip')).toMatchObject({
      run: null,
      missed: { first: due, count: 4 },
    });
    expect(planOccurrences(hourly, due, now, 'run_once')).toMatchObject({
      run: new Date('2026-12-03T12:00:00Z'),
      missed: { first: due, count: 3 },
      next: new Date('2026-12-03T13:00:00Z'),
    });
  });

  it('stops counting after a very long downtime and still finds the latest and next occurrences', () => {
    const minutely = parseSchedule('* * * * *', 'UTC');
    const now = new Date('2027-02-03T09:00:30Z');
    const plan = planOccurrences(minutely, due, now, 'run_once');
    expect(plan.run).toEqual(new Date('2027-02-03T09:00:00Z'));
    expect(plan.next).toEqual(new Date('2027-02-03T09:01:00Z'));
    expect(plan.missed?.count).toBe(MAX_COUNTED_OCCURRENCES - 1);
  });
});
