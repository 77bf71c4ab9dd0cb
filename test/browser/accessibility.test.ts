import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { ClaimTask, CompleteTask, queueTask } from '../schema/agents-support.js';
import { runningTest, seedCounts } from '../schema/experiments-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations, describeViolations, type Violation } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, pauseOverRest, SetLiveMode, serveDashboard, WAIT_MS } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let advised: string;
/** Every page's violations, written to test-results/accessibility.json for the record. */
const report: Record<string, Violation[]> = {};

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-a11y' });
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
  // Something in every panel: a paused role, a failed count, a running test, a task with advice.
  await pauseOverRest(t, chairman, 'cmo');
  const test = await runningTest(t, chairman);
  await seedCounts(t, chairman, test, [
    { observations: 120, successes: 30 },
    { observations: 120, successes: 41 },
  ]);
  await runningTest(t, chairman);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  advised = await queueTask(t, chairman, 'cfo', 'Forecast Q3 cash flow');
  await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  await t.graphql(
    CompleteTask,
    {
      id: advised,
      input: {
        output: 'Cash stays positive.',
        tokensUsed: 900,
        costUsd: 0.02,
        recommendations: [{ summary: 'Delay the office move', predictedOutcome: 'Cash floor above $2M' }],
      },
    },
    agent,
  );
  await t.app.services.relay.kick();
});
afterAll(async () => {
  await mkdir('test-results', { recursive: true });
  await writeFile(path.join('test-results', 'accessibility.json'), `${JSON.stringify(report, null, 2)}\n`);
});

async function audit(page: Page, name: string): Promise<Violation[]> {
  const violations = await accessibilityViolations(page);
  report[name] = violations;
  return violations;
}

describe('axe-core (WCAG 2.2 A and AA) on every page the gateway serves', () => {
  it('finds nothing on the landing page', async () => {
    const page = await browser.open(`${server.url}/`);
    await page.getByRole('heading', { name: 'Boardroom' }).waitFor();
    expect(describeViolations(await audit(page, 'landing'))).toEqual([]);
    await page.close();
  });

  it('finds nothing on the dashboard’s token prompt', async () => {
    const page = await browser.open(`${server.url}/dashboard`);
    await page.waitForSelector('textarea[name="token"]', { timeout: WAIT_MS });
    expect(describeViolations(await audit(page, 'dashboard: token prompt'))).toEqual([]);
    await page.close();
  });

  it('finds nothing on the loaded dashboard, with a task’s detail open, or with a confirmation open', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector('[data-ab-test] [data-verdict="not-significant"]', { timeout: WAIT_MS });
    await page.waitForSelector('[data-chart="tasks"] canvas', { timeout: WAIT_MS });
    await page.waitForSelector(`[data-task-id="${advised}"]`, { timeout: WAIT_MS });
    expect(describeViolations(await audit(page, 'dashboard: loaded'))).toEqual([]);

    await page.click(`[data-task-id="${advised}"] button`);
    await page.waitForSelector(`[data-task-detail="${advised}"] [data-recommendation-id]`, {
      timeout: WAIT_MS,
    });
    expect(describeViolations(await audit(page, 'dashboard: task detail'))).toEqual([]);
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog', { state: 'detached', timeout: WAIT_MS });

    await page.click('[data-role="cmo"] button[data-action="resume"]');
    await page.waitForSelector('dialog[data-dialog="resume"]', { timeout: WAIT_MS });
    expect(describeViolations(await audit(page, 'dashboard: confirmation'))).toEqual([]);
    await page.keyboard.press('Escape');
    await page.close();
  });

  it('finds nothing on the dashboard 390 px wide', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForSelector('[data-chart="tasks"] canvas', { timeout: WAIT_MS });
    expect(describeViolations(await audit(page, 'dashboard: 390 px'))).toEqual([]);
    await page.close();
  });
});

describe('the dashboard by keyboard', () => {
  it('reaches every kind of control with Tab, each with a visible focus indicator', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector(`[data-task-id="${advised}"]`, { timeout: WAIT_MS });
    const reached = new Set<string>();
    for (let step = 0; step < 80; step += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        if (!element || element === document.body) return null;
        const style = getComputedStyle(element);
        const kind =
          element.getAttribute('data-action') ??
          element.getAttribute('data-filter') ??
          element.getAttribute('data-page') ??
          (element.hasAttribute('data-sign-out') ? 'sign-out' : null) ??
          (element.closest('[data-tasks]') ? 'task' : null) ??
          (element.closest('.trends') ? 'trend-role' : null) ??
          (element.closest('.feed') ? 'feed' : null) ??
          element.tagName.toLowerCase();
        return { kind, outline: style.outlineStyle, width: Number.parseFloat(style.outlineWidth) };
      });
      if (!focused) continue;
      expect(focused.outline, `${focused.kind} shows its focus`).not.toBe('none');
      expect(focused.width).toBeGreaterThanOrEqual(2);
      reached.add(focused.kind);
    }
    for (const kind of ['sign-out', 'pause', 'resume', 'feed', 'trend-role', 'role', 'status', 'task']) {
      expect(reached, kind).toContain(kind);
    }
    await page.close();
  });

  it('pauses a role with the keyboard alone, and focus comes back to its card', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    const pause = page.locator('[data-role="coo"] button[data-action="pause"]');
    await pause.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[data-dialog="pause"]', { timeout: WAIT_MS });
    // Focus moves into the dialog, on its first field.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('reason');
    await page.keyboard.type('keyboard only');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Pause COO');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-role="coo"][data-state="paused"]', { timeout: WAIT_MS });
    await page.waitForSelector('dialog', { state: 'detached', timeout: WAIT_MS });
    expect(
      await page.evaluate(() => document.activeElement?.closest('[data-role]')?.getAttribute('data-role')),
    ).toBe('coo');
    await page.close();
  });
});

describe('the dashboard on a narrow screen', () => {
  it('puts the summary (queue, approvals waiting and alerts) before the eight role cards', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.setViewportSize({ width: 390, height: 844 });
    const summary = await page.locator('.summary').boundingBox();
    const firstCard = await page.locator('[data-role]').first().boundingBox();
    expect(summary && firstCard && summary.y + summary.height <= firstCard.y).toBe(true);
    expect(await page.textContent('.summary')).toContain('Pending');
    expect(await page.textContent('[data-alerts]')).toContain('is paused');
    expect(await page.$('.summary [data-approvals-waiting]')).not.toBeNull();
    // Nothing wider than the screen.
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > 391 && !element.closest('.table-scroll'))
        .map((element) => `${element.tagName.toLowerCase()}.${element.className}`)
        .slice(0, 10),
    );
    expect(wide).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await browser.screenshot(page, 'dashboard-narrow');
    await page.locator('[data-role="cmo"]').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-narrow-cards');
    await page.close();
  });
});

describe('how fast the dashboard loads', () => {
  it('records the navigation timing and the time until its data is on the page', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForLoadState('load');
    const timing = await page.evaluate(() => {
      const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
      const [loaded] = performance.getEntriesByName('boardroom:loaded');
      return {
        responseEnd: navigation?.responseEnd,
        domContentLoaded: navigation?.domContentLoadedEventEnd,
        load: navigation?.loadEventEnd,
        dataOnPage: loaded?.startTime,
        transferredBytes: performance
          .getEntriesByType('resource')
          .concat(navigation ? [navigation] : [])
          .reduce((sum, entry) => sum + ((entry as PerformanceResourceTiming).transferSize ?? 0), 0),
      };
    });
    await mkdir('test-results', { recursive: true });
    await writeFile(
      path.join('test-results', 'dashboard-timing.json'),
      `${JSON.stringify(timing, null, 2)}\n`,
    );
    console.log(`dashboard timing (ms since navigation start): ${JSON.stringify(timing)}`);
    expect(timing.load).toBeGreaterThan(0);
    expect(timing.dataOnPage).toBeGreaterThan(0);
    await page.close();
  });
});

/**
 * Swagger UI and GraphiQL render their own markup. Our styles fix what a style can (contrast, target
 * sizes), Swagger UI's plugin API what its markup got wrong (rest/docs-page.ts); what only GraphiQL's own
 * markup could fix is listed here, rule by rule, so that anything else fails.
 */
describe('the pages whose markup is a library’s', () => {
  it('finds nothing on /docs, an operation opened or not', async () => {
    const page = await browser.open(`${server.url}/docs`);
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(describeViolations(await audit(page, '/docs'))).toEqual([]);
    // An opened operation: parameters, the request body and the responses with their examples.
    await page.locator('#operations-connectors-updateConnector .opblock-summary-control').click();
    await page.locator('#operations-connectors-updateConnector .responses-table').first().waitFor();
    expect(describeViolations(await audit(page, '/docs (an operation opened)'))).toEqual([]);
    await page.close();
  });

  it('finds on GraphiQL only what its markup causes', async () => {
    const page = await browser.open(`${server.url}/graphql`);
    await page.waitForSelector('.graphiql-query-editor', { timeout: 20_000 });
    const violations = await audit(page, 'GraphiQL');
    console.log(`GraphiQL: ${JSON.stringify(describeViolations(violations), null, 2)}`);
    // Its editor tab (an <li> with role "tab") holds the tab's close button: no option of GraphiQL leaves the
    // tabs or the button out, and no style or label changes what the markup nests
    // (docs/decisions/0037-dashboard.md).
    expect(violations.map((violation) => violation.rule)).toEqual(['nested-interactive']);
    await page.close();
  });

  it('reported no Content-Security-Policy violation and requested nothing from another host', () => {
    expect(browser.cspViolations()).toEqual([]);
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });
});
