import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { queueTask } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations, describeViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let agent: Caller;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-1' });
  await t.app.services.tenants.ensure(chairman.tenantId);
  agent = await t.caller(['agent'], { tenantId: chairman.tenantId, sub: 'agent-1' });
  const set = await t.graphql(
    'mutation { setCompletionPolicy(role: "cfo", input: { reviewerRole: "ceo" }) { role } }',
    {},
    chairman,
  );
  expect(set.errors).toBeUndefined();
});

/** A cfo task its agent completed, waiting for the ceo role's acceptance. */
async function taskInReview(message: string): Promise<string> {
  const id = await queueTask(t, chairman, 'cfo', message);
  await t.graphql('mutation { claimNextTask(role: "cfo") { outcome } }', {}, agent);
  const completed = await t.graphql(
    `mutation { completeTask(id: "${id}", input: { tokensUsed: 10, costUsd: 0.1, output: "Q3: +4%" }) { status } }`,
    {},
    agent,
  );
  expect(completed.data).toEqual({ completeTask: { status: 'in_review' } });
  return id;
}

const statusOf = async (id: string) => (await t.db.prisma.task.findUniqueOrThrow({ where: { id } })).status;

describe('a task in review in the console', () => {
  it('shows its reviewer and accepts it', async () => {
    const id = await taskInReview('Forecast Q3.');
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector(`[data-task-id="${id}"] button`, { timeout: WAIT_MS });
    await page.click(`[data-task-id="${id}"] button`);
    await page.waitForSelector('[data-task-review="pending"]', { timeout: WAIT_MS });
    expect(await page.textContent('[data-field="reviewer_role"]')).toBe('CEO');
    expect(await page.getAttribute('[data-task-detail]', 'data-status')).toBe('in_review');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await browser.screenshot(page, 'dashboard-task-in-review');

    await page.click('[data-review="accept"]');
    await page.waitForSelector('[data-task-review="accepted"]', { timeout: WAIT_MS });
    expect(await statusOf(id)).toBe('completed');
    expect(await page.$('[data-review="accept"]')).toBeNull();
    await page.close();
  });

  it('rejects it with a reason, which the task then shows', async () => {
    const id = await taskInReview('Forecast Q4.');
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector(`[data-task-id="${id}"] button`, { timeout: WAIT_MS });
    await page.click(`[data-task-id="${id}"] button`);
    await page.waitForSelector('[data-task-review="pending"]', { timeout: WAIT_MS });
    expect(await page.isDisabled('[data-review="reject"]')).toBe(true);
    await page.fill('[data-review-reason]', 'Berlin is missing.');
    await page.click('[data-review="reject"]');
    await page.waitForSelector('[data-task-review="rejected"]', { timeout: WAIT_MS });
    expect(await page.textContent('[data-field="review_note"]')).toBe('Berlin is missing.');
    expect(await statusOf(id)).toBe('pending');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await browser.screenshot(page, 'dashboard-task-rejected');
    await page.close();
  });
});
