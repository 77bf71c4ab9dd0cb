import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { setBudget } from '../schema/agents-budgets-support.js';
import { ClaimTask, CompleteTask, queueTask } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS, waitForText } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let agent: Caller;
let page: Page;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-budgets' });
  agent = await t.caller(['agent'], { tenantId: chairman.tenantId, sub: 'agent-budgets' });
  // $10 a day for the CFO, $4 reserved by each claim, a warning at 50 %.
  await setBudget(t, chairman, {
    role: 'cfo',
    period: 'day',
    limitUsd: '10',
    estimateUsd: '4',
    warningThreshold: 0.5,
  });
  // The company's, over every role: $100 a month.
  await setBudget(t, chairman, { period: 'month', limitUsd: '100', estimateUsd: '1' });
});

/** Runs one CFO task to completion at `costUsd`. */
async function spend(costUsd: number): Promise<void> {
  const id = await queueTask(t, chairman, 'cfo', 'Close the books');
  const claimed = await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  expect(claimed.errors).toBeUndefined();
  const done = await t.graphql(CompleteTask, { id, input: { costUsd, tokensUsed: 100 } }, agent);
  expect(done.errors).toBeUndefined();
}

const budget = '[data-role="cfo"] [data-budget]';

describe('a role’s budget on the dashboard', () => {
  it('shows what the role spent against its limit, and no budget on a role without one', async () => {
    page = await openDashboard(browser, server.url, chairman);
    await waitForText(page, `${budget} [data-field="budget"]`, '$0.00 of $10.00');
    await waitForText(page, '[data-company-budget] [data-field="budget"]', '$0.00 of $100.00');
    expect(await page.getAttribute(budget, 'data-budget')).toBe('within');
    expect(await page.getAttribute(`${budget} meter`, 'aria-label')).toBe(
      'CFO budget today: $0.00 of $10.00 spent',
    );
    expect(await page.$('[data-role="cmo"] [data-budget]')).toBeNull();
  });

  it('follows a completion live, warns past the threshold and says when the role is exhausted', async () => {
    await spend(5.5);
    await waitForText(page, `${budget} [data-field="budget"]`, '$5.50 of $10.00');
    await waitForText(page, '[data-company-budget] [data-field="budget"]', '$5.50 of $100.00');
    // 5.5 + the 4 reserved by a claim fits under 10; the warning threshold (5) is passed.
    expect(await page.getAttribute(budget, 'data-budget')).toBe('warning');
    await page.waitForSelector('.feed li.budget', { timeout: WAIT_MS });
    expect(await page.textContent('.feed li.budget')).toContain(
      'CFO budget warning: $5.50 of $10.00 spent today',
    );

    // The trends draw the budget's burn against its limit, and say it in words.
    await page.selectOption('[data-trends] select', 'cfo');
    await waitForText(
      page,
      '[data-chart="budget"] [data-field="summary"]',
      '$5.50 of $10.00 spent today (55%); $0.00 held by running tasks.',
    );
    expect(await page.$('[data-chart="budget"] canvas')).not.toBeNull();
    await page.locator('[data-chart="budget"]').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-budget-burn');

    await spend(1);
    // 6.5 + 4 passes 10: no claim would be taken.
    await page.waitForSelector(`${budget}[data-budget="exhausted"]`, { timeout: WAIT_MS });
    expect(await page.textContent(`${budget} .budget-note`)).toContain('Exhausted: takes no new work.');
    await page.locator('[data-role="cfo"]').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-budget');
  });

  it('reported no Content-Security-Policy violation and requested nothing from another host', () => {
    expect(browser.cspViolations()).toEqual([]);
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });
});
