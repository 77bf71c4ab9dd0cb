import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { CLAIM, COMPLETE, DELEGATE, ok, REGISTER } from '../schema/agents-delegation-support.js';
import { queueTask } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations, describeViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS, waitForText } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let agent: Caller;
let rootId: string;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-1' });
  await t.app.services.tenants.ensure(chairman.tenantId);
  agent = await t.caller(['agent'], { tenantId: chairman.tenantId, sub: 'agent-1' });
  await ok(
    t,
    REGISTER,
    { input: { role: 'controller', displayName: 'Controller', reportsTo: 'cfo' } },
    chairman,
  );
  rootId = await queueTask(t, chairman, 'ceo', 'Brief the board on revenue and legal risk.');
  await ok(t, CLAIM, { role: 'ceo' }, agent);
  await ok(
    t,
    DELEGATE,
    {
      taskId: rootId,
      input: {
        delegations: [
          { role: 'cfo', message: 'Revenue this quarter?', costCapUsd: 2 },
          { role: 'clo', message: 'Open litigation?' },
        ],
        tokensUsed: 1000,
        costUsd: 0.01,
      },
    },
    agent,
  );
});

/** Each role of the chart and the role it sits under, as the page draws them. */
const chartOf = (page: Page) =>
  page.$$eval('[data-org-chart] li[data-org-role]', (items) =>
    items.map((item) => [
      item.getAttribute('data-org-role'),
      item.parentElement?.closest('li[data-org-role]')?.getAttribute('data-org-role') ?? null,
    ]),
  );

describe('the org chart and the delegation tree', () => {
  it('draws who reports to whom, a registered role under its manager', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector('[data-org-chart] li[data-org-role="controller"]', { timeout: WAIT_MS });
    expect(new Map((await chartOf(page)) as [string, string | null][])).toEqual(
      new Map([
        ['ceo', null],
        ['cfo', 'ceo'],
        ['controller', 'cfo'],
        ['chro', 'ceo'],
        ['clo', 'ceo'],
        ['cmo', 'ceo'],
        ['coo', 'ceo'],
        ['cpo', 'ceo'],
        ['cto', 'ceo'],
      ]),
    );
    expect(await page.textContent('[data-org-role="controller"] .org-role')).toBe('Controller');
    const violations = await accessibilityViolations(page);
    expect(describeViolations(violations)).toEqual([]);
    await browser.screenshot(page, 'dashboard-org-chart');
    await page.close();
  });

  it('shows a task’s sub-tasks, opens them, and follows them live as they end', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector(`[data-task-id="${rootId}"] button`, { timeout: WAIT_MS });
    await page.click(`[data-task-id="${rootId}"] button`);
    await page.waitForSelector('[data-delegation]', { timeout: WAIT_MS });
    const subtasks = () =>
      page.$$eval('[data-subtask]', (items) =>
        items.map((item) => [item.textContent?.split(' · ')[0], item.getAttribute('data-status')]),
      );
    expect(await subtasks()).toEqual([
      ['CFO', 'pending'],
      ['CLO', 'pending'],
    ]);
    expect(await page.getAttribute('[data-task-detail]', 'data-status')).toBe('waiting');

    // The CFO's agent completes its sub-task: the open tree follows without a reload.
    const claimed = await ok(t, CLAIM, { role: 'cfo' }, agent);
    const cfoTask = claimed.claimNextTask.task.id as string;
    await ok(
      t,
      COMPLETE,
      { id: cfoTask, input: { output: 'Revenue: 1.2M', tokensUsed: 300, costUsd: 0.5 } },
      agent,
    );
    await page.waitForSelector(`[data-subtask="${cfoTask}"][data-status="completed"]`, { timeout: WAIT_MS });
    await waitForText(page, '[data-field="tree_cost_usd"]', '$0.51 (1,300 tokens)');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await browser.screenshot(page, 'dashboard-task-tree');

    // A sub-task opens in place of its parent, which it links back to.
    await page.click(`[data-subtask="${cfoTask}"] button`);
    await page.waitForSelector(`[data-task-detail="${cfoTask}"] [data-field="parent"]`, { timeout: WAIT_MS });
    expect(await page.textContent('[data-field="cost_cap_usd"]')).toBe('$2.00');
    await page.click('[data-field="parent"] button');
    await page.waitForSelector(`[data-task-detail="${rootId}"]`, { timeout: WAIT_MS });
    await page.close();
  });
});
