import { describe, expect, it } from 'vitest';
import { tickRoutines } from '../../src/domain/routines/tick.js';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
const ids: Record<'queued' | 'paused' | 'fresh', string> = { queued: '', paused: '', fresh: '' };

const CREATE = `mutation Create($input: CreateRoutineInput!) { createRoutine(input: $input) { id nextRunAt } }`;

async function createRoutine(input: Record<string, unknown>) {
  const result = await t.graphql<any, unknown>(CREATE, { input }, chairman);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data.createRoutine as { id: string; nextRunAt: string };
}

serveDashboard(
  async (made) => {
    ({ t, server, browser } = made);
    chairman = await t.caller(['chairman'], { sub: 'chair-routines' });
    await t.app.services.tenants.ensure(chairman.tenantId);
    const queued = await createRoutine({
      role: 'cfo',
      cron: '0 9 * * *',
      timeZone: 'Europe/Paris',
      message: 'Send the cash position',
    });
    const paused = await createRoutine({
      role: 'cmo',
      cron: '0 9 * * *',
      timeZone: 'Europe/Paris',
      message: 'Post the recap',
    });
    Object.assign(ids, { queued: queued.id, paused: paused.id });
    await t.db.prisma.agentRole.update({
      where: { tenantId_role: { tenantId: chairman.tenantId, role: 'cmo' } },
      data: { paused: true, pausedAt: new Date() },
    });
    // Their first occurrence (the same instant) comes; a third routine, added after, has not run.
    expect(paused.nextRunAt).toBe(queued.nextRunAt);
    await tickRoutines(t.db.prisma, { now: new Date(Date.parse(queued.nextRunAt) + 1000) });
    const fresh = await createRoutine({
      role: 'cto',
      cron: '30 6 * * *',
      timeZone: 'America/New_York',
      message: 'Check the uptime',
    });
    ids.fresh = fresh.id;
  },
  { env: { ROUTINE_TICK_INTERVAL_MS: '3600000' } },
);

describe('dashboard routines', () => {
  it('lists routines with role, schedule, time zone, next run and last outcome with its reason', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector('table[data-routines] tbody tr', { timeout: WAIT_MS });
    const row = (id: string) => `tr[data-routine-id="${id}"]`;
    expect(await page.textContent(row(ids.queued))).toContain('0 9 * * *');
    expect(await page.textContent(row(ids.queued))).toContain('Europe/Paris');
    expect(await page.getAttribute(`${row(ids.queued)} [data-field="last_outcome"]`, 'data-value')).toBe(
      'queued',
    );
    expect(await page.getAttribute(`${row(ids.paused)} [data-field="last_outcome"]`, 'data-reason')).toBe(
      'role_paused',
    );
    expect(await page.textContent(`${row(ids.paused)} [data-field="last_outcome"]`)).toContain(
      'Skipped: the role was paused',
    );
    expect(await page.textContent(row(ids.fresh))).toContain('Not run yet');
    expect(await page.$(`${row(ids.fresh)} [data-field="next_run"] time`)).not.toBeNull();
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.locator('section.routines').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-routines');
    // The queued occurrence's task opens from the list.
    await page.click(`${row(ids.queued)} [data-field="last_outcome"] button`);
    await page.waitForSelector('[data-task-detail]', { timeout: WAIT_MS });
    await page.close();
  });
});
