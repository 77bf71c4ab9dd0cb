import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { PNG } from '../domain/agents/attachment-samples.js';
import { ClaimTask, CompleteTask, FailTask, queueTask } from '../schema/agents-support.js';
import { promote, register } from '../schema/finetuning-support.js';
import { bind } from '../schema/model-routing-support.js';
import type { Caller, TestApp } from '../support/app.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS, waitForText } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let member: Caller;
let agent: Caller;
let page: Page;
let advised: string;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  member = await t.caller(['member'], { sub: 'member-1' });
  agent = await t.caller(['agent'], { tenantId: member.tenantId, sub: 'agent-7' });

  // 23 pending CMO tasks (more than a page), one failed CTO task, one completed CFO task with advice.
  for (let index = 0; index < 23; index += 1)
    await queueTask(t, member, 'cmo', `Campaign brief ${index + 1}`);
  const failed = await queueTask(t, member, 'cto', 'Migrate the build');
  await t.graphql(ClaimTask, { role: 'cto' }, agent);
  await t.graphql(FailTask, { id: failed, error: 'the runner ran out of disk' }, agent);
  const chat = await t.rest('POST', '/api/v1/agents/cfo/chat', {
    caller: member,
    body: {
      message: 'Forecast Q3 cash flow\nwith the attached chart',
      attachments: [{ data: PNG.toString('base64'), mime_type: 'image/png', filename: 'q3-chart.png' }],
    },
  });
  expect(chat.status).toBe(202);
  advised = chat.body.data.task_id;
  // The CFO runs on a fine-tuned model: its claim carries version 1 of it.
  const operator = await t.caller(['operator'], { tenantId: member.tenantId });
  await promote(t, operator, await register(t, operator, 'cfo-forecaster'));
  await bind(t, operator, 'cfo', 'cfo-forecaster');
  await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  const done = await t.graphql(
    CompleteTask,
    {
      id: advised,
      input: {
        output: 'Cash stays positive through September.',
        tokensUsed: 15320,
        costUsd: 0.0421,
        recommendations: [
          { summary: 'Delay the office move to Q4', predictedOutcome: 'Cash floor above $2M' },
          { summary: 'Renegotiate the cloud contract' },
        ],
      },
    },
    agent,
  );
  expect(done.errors).toBeUndefined();
});

const rows = (target: Page) =>
  target.$$eval('[data-tasks] tbody tr', (items) =>
    items.map((item) => ({
      id: item.getAttribute('data-task-id'),
      status: item.getAttribute('data-status'),
    })),
  );

describe('the task list', () => {
  it('lists the newest tasks a page at a time with column headers', async () => {
    page = await openDashboard(browser, server.url, member);
    await page.waitForSelector(`[data-task-id="${advised}"]`, { timeout: WAIT_MS });
    const headers = await page.$$eval('[data-tasks] thead th', (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(headers).toEqual(['Created', 'Role', 'Status', 'Message', 'Model', 'Cost', 'Duration']);
    const first = await rows(page);
    expect(first).toHaveLength(20);
    expect(first[0]).toEqual({ id: advised, status: 'completed' });
    expect(await page.textContent(`[data-task-id="${advised}"]`)).toContain('$0.0421');
    expect(await page.textContent(`[data-task-id="${advised}"] [data-field="model_version"]`)).toBe(
      'cfo-forecaster v1',
    );

    await page.click('button[data-page="older"]');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-tasks] tbody tr').length === 5,
      undefined,
      {
        timeout: WAIT_MS,
      },
    );
    expect(await page.isDisabled('button[data-page="older"]')).toBe(true);
    await page.click('button[data-page="newer"]');
    await page.waitForSelector(`[data-task-id="${advised}"]`, { timeout: WAIT_MS });
    await page.locator('.tasks').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-tasks');
  });

  it('filters by role and by status', async () => {
    await page.selectOption('select[data-filter="role"]', 'cto');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-tasks] tbody tr').length === 1,
      undefined,
      {
        timeout: WAIT_MS,
      },
    );
    expect((await rows(page))[0]?.status).toBe('failed');

    await page.selectOption('select[data-filter="role"]', '');
    await page.selectOption('select[data-filter="status"]', 'pending');
    // Every row pending and a full page of them: `every` alone also holds while the list is empty.
    await page.waitForFunction(
      () => {
        const shown = [...document.querySelectorAll('[data-tasks] tbody tr')];
        return shown.length === 20 && shown.every((row) => row.getAttribute('data-status') === 'pending');
      },
      undefined,
      { timeout: WAIT_MS },
    );
    expect(await rows(page)).toHaveLength(20);
    await page.selectOption('select[data-filter="status"]', 'cancelled');
    await page.waitForSelector('text=No task matches.', { timeout: WAIT_MS });
    await page.selectOption('select[data-filter="status"]', '');
    await page.waitForSelector(`[data-task-id="${advised}"]`, { timeout: WAIT_MS });
  });

  it('opens a task’s detail: message, attachment names, output, cost, tokens and timings', async () => {
    await page.click(`[data-task-id="${advised}"] button`);
    const detail = `[data-task-detail="${advised}"]`;
    await page.waitForSelector(`${detail} [data-field="output"]`, { timeout: WAIT_MS });
    expect(await page.textContent(`${detail} [data-field="message"]`)).toBe(
      'Forecast Q3 cash flow\nwith the attached chart',
    );
    expect(await page.textContent(`${detail} [data-field="attachments"]`)).toContain('q3-chart.png');
    expect(await page.textContent(`${detail} [data-field="output"]`)).toBe(
      'Cash stays positive through September.',
    );
    expect(await page.textContent(`${detail} [data-field="tokens_used"]`)).toBe('15,320');
    expect(await page.textContent(`${detail} [data-field="cost_usd"]`)).toBe('$0.0421');
    expect(await page.textContent(`${detail} [data-field="duration_seconds"]`)).toMatch(/sec$/);
    expect(await page.textContent(detail)).toContain('agent-7');
    expect(await page.textContent(`${detail} [data-field="model_version"]`)).toBe('cfo-forecaster v1');
    await browser.screenshot(page, 'dashboard-task-detail');
  });

  it('accepts and rejects a recommendation and records its outcome, as a member may', async () => {
    const detail = `[data-task-detail="${advised}"]`;
    const first = `${detail} [data-recommendation-id]:first-child`;
    await page.click(`${first} button[data-decide="accept"]`);
    await page.waitForSelector(`${first}[data-decision="accepted"]`, { timeout: WAIT_MS });
    expect(await page.getAttribute(`${first} button[data-decide="accept"]`, 'aria-pressed')).toBe('true');
    expect(await page.textContent(first)).toContain('Accepted by member-1');
    await page.click(`${first} button[data-outcome-button="missed"]`);
    await page.waitForSelector(`${first}[data-outcome="missed"]`, { timeout: WAIT_MS });

    const second = `${detail} [data-recommendation-id]:nth-child(2)`;
    // Without a predicted outcome there is no outcome to record.
    expect(await page.$(`${second} button[data-outcome-button]`)).toBeNull();
    await page.click(`${second} button[data-decide="reject"]`);
    await page.waitForSelector(`${second}[data-decision="rejected"]`, { timeout: WAIT_MS });

    const stored = await t.db.prisma.recommendation.findMany({
      where: { taskId: advised },
      orderBy: { createdAt: 'asc' },
    });
    expect(stored.map((one) => [one.accepted, one.outcomeMatched, one.decidedBy])).toEqual([
      [true, false, 'member-1'],
      [false, null, 'member-1'],
    ]);
    // The role's vitals count the decisions.
    await waitForText(page, '[data-role="cfo"] [data-field="acceptance_rate"]', '50%');
    await browser.screenshot(page, 'dashboard-task-decided');
  });

  it('closes the detail with Escape and gives focus back to the row that opened it', async () => {
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog[data-dialog="task"]', { state: 'detached', timeout: WAIT_MS });
    expect(
      await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-task-id')),
    ).toBe(advised);
  });

  it('shows a task that fails while the list is open without a reload', async () => {
    const id = await queueTask(t, member, 'coo', 'Plan the offsite');
    await page.waitForSelector(`[data-task-id="${id}"][data-status="pending"]`, { timeout: WAIT_MS });
    await t.graphql(ClaimTask, { role: 'coo' }, agent);
    await t.graphql(FailTask, { id, error: 'no venue' }, agent);
    await page.waitForSelector(`[data-task-id="${id}"][data-status="failed"]`, { timeout: WAIT_MS });
    expect(await page.textContent('[data-alerts]')).toContain('COO: 1 task failed in the last 24 hours.');
  });

  it('reported no Content-Security-Policy violation and requested nothing from another host', () => {
    expect(browser.cspViolations()).toEqual([]);
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });
});
