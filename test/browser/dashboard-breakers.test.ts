import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { ok, REGISTER } from '../schema/agents-delegation-support.js';
import { ClaimTask, FailTask, queueTask } from '../schema/agents-support.js';
import { SET_POLICY } from '../schema/breakers-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations, describeViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { card, openDashboard, serveDashboard, WAIT_MS, waitForMatch } from './support/dashboard.js';

// A breaker pauses a registered role while the chairman watches: the card says why, and one click resumes.

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let member: Caller;
let agent: Caller;
let page: Page;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-breakers' });
  member = await t.caller(['member'], { tenantId: chairman.tenantId, sub: 'member-breakers' });
  agent = await t.caller(['agent'], { tenantId: chairman.tenantId, sub: 'agent-breakers' });
  await t.app.services.tenants.ensure(chairman.tenantId);
  await ok(t, REGISTER, { input: { role: 'analyst', reportsTo: 'cfo' } }, chairman);
  await ok(t, SET_POLICY, { role: 'analyst', input: { consecutiveFailures: 2 } }, chairman);
});

/** Queues, claims and fails one task of the analyst. */
async function failOne(): Promise<void> {
  const id = await queueTask(t, chairman, 'analyst', 'Reconcile the ledger');
  const claimed = await t.graphql(ClaimTask, { role: 'analyst' }, agent);
  expect(claimed.errors).toBeUndefined();
  const failed = await t.graphql(FailTask, { id, error: 'model refused' }, agent);
  expect(failed.errors).toBeUndefined();
}

describe('a breaker’s pause on the dashboard', () => {
  it('shows which breaker paused the role and its figures, live', async () => {
    page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector(card('analyst', 'active'), { timeout: WAIT_MS });
    await failOne();
    await failOne();
    await page.waitForSelector(card('analyst', 'paused'), { timeout: WAIT_MS });
    const note = `${card('analyst', 'paused')} [data-breaker="consecutive_failures"]`;
    await page.waitForSelector(note, { timeout: WAIT_MS });
    await waitForMatch(page, `${note} [data-field="breaker-evidence"]`, /2 failed in a row \(limit 2\)/);
    expect(await page.textContent(`${card('analyst', 'paused')} .who`)).toContain(
      'breaker:consecutive_failures',
    );
    expect(await page.$$(`${note} .breaker-tasks code`)).toHaveLength(2);
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.locator(card('analyst', 'paused')).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-breaker');
  });

  it('resumes the role with one click of the chairman', async () => {
    await page.click(`${card('analyst', 'paused')} button[data-action="resume-now"]`);
    await page.waitForSelector(card('analyst', 'active'), { timeout: WAIT_MS });
    expect(await page.$('dialog')).toBeNull();
    expect(await page.$(`${card('analyst', 'active')} [data-breaker]`)).toBeNull();
  });

  it('shows a member why, without the resume', async () => {
    await failOne();
    await failOne();
    const watcher = await openDashboard(browser, server.url, member);
    await watcher.waitForSelector(`${card('analyst', 'paused')} [data-breaker]`, { timeout: WAIT_MS });
    expect(await watcher.$(`${card('analyst', 'paused')} button[data-action="resume-now"]`)).toBeNull();
  });

  it('reported no Content-Security-Policy violation and requested nothing from another host', () => {
    expect(browser.cspViolations()).toEqual([]);
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });
});
