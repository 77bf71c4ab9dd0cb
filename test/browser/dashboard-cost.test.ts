import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let rootId = '';

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-cost' });
  const tenantId = chairman.tenantId;
  await t.app.services.tenants.ensure(tenantId);
  const finishedAt = new Date(Date.now() - 60_000);
  const seed = (role: string, costUsd: string, extra: Record<string, unknown> = {}) =>
    t.db.prisma.task.create({
      data: {
        tenantId,
        role,
        message: `${role} work`,
        createdBy: 'seed',
        status: 'completed',
        attempts: 1,
        startedAt: new Date(finishedAt.getTime() - 1000),
        finishedAt,
        tokensUsed: 100,
        costUsd,
        ...extra,
      },
    });
  const root = await seed('cfo', '0.25');
  rootId = root.id;
  await t.db.prisma.taskDeliverable.createMany({
    data: [
      {
        tenantId,
        taskId: root.id,
        position: 0,
        kind: 'text',
        title: 'Memo',
        text: 'Cash is fine.',
        sha256: 'a'.repeat(64),
        size: 13,
      },
      {
        tenantId,
        taskId: root.id,
        position: 1,
        kind: 'link',
        url: 'https://example.com/cash',
        sha256: 'b'.repeat(64),
        size: 24,
      },
    ],
  });
  await seed('cto', '0.5', { parentTaskId: root.id, rootTaskId: root.id, depth: 1 });
});

describe('dashboard cost', () => {
  it('shows cost by role adding up to the total, and regroups from the keyboard', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector('section.cost table[data-cost-rows] tbody tr', { timeout: WAIT_MS });
    const cost = (key: string) =>
      page.getAttribute(`section.cost tr[data-cost-key="${key}"] [data-field="cost_usd"]`, 'data-value');
    expect(await cost('cto')).toBe('0.500000');
    expect(await cost('cfo')).toBe('0.250000');
    expect(await page.getAttribute('section.cost [data-field="total_cost_usd"]', 'data-value')).toBe(
      '0.750000',
    );
    expect(await accessibilityViolations(page)).toEqual([]);

    // The grouping is a native select: focused and changed with the arrow keys alone.
    await page.focus('section.cost select');
    for (const _ of ['MODEL_VERSION', 'THREAD', 'ROOT_TASK']) await page.keyboard.press('ArrowDown');
    await page.waitForSelector(`section.cost[data-cost-group="ROOT_TASK"] tr[data-cost-key="${rootId}"]`, {
      timeout: WAIT_MS,
    });
    expect(await cost(rootId)).toBe('0.750000');
    await page.locator('section.cost').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-cost');
    await page.close();
  });

  it('shows a task’s deliverables in its detail, a link as a link', async () => {
    const page = await openDashboard(browser, server.url, chairman);
    await page.click(`[data-task-id="${rootId}"] button`);
    const detail = `[data-task-detail="${rootId}"] [data-field="deliverables"]`;
    await page.waitForSelector(detail, { timeout: WAIT_MS });
    expect(await page.textContent(`${detail} [data-deliverable-kind="TEXT"]`)).toContain(
      'Memo: Cash is fine.',
    );
    expect(await page.getAttribute(`${detail} [data-deliverable-kind="LINK"] a`, 'href')).toBe(
      'https://example.com/cash',
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.close();
  });
});
