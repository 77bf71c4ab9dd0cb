import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { queueTask } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations, describeViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS } from './support/dashboard.js';

// A task's timeline in the console: its run record's steps in order with their durations and costs, the
// links from a delegation to its sub-task and from an approval step to the approval, followed live: a step
// recorded while the task runs appears without any change of the task's status.

const CLAIM = `mutation Claim($role: String!) { claimTask(role: $role) { id attempts } }`;
const REPORT = `mutation Report($taskId: ID!, $steps: [ModelStepInput!]!) {
  reportTaskSteps(taskId: $taskId, steps: $steps) { lastSeq }
}`;
const ASK = `mutation Ask($taskId: ID!) {
  requestTaskApproval(taskId: $taskId, input: { summary: "Spend on the audit?", payload: { usd: 900 } }) { id }
}`;
const APPROVE = `mutation Approve($id: ID!) { approveTaskApproval(id: $id, note: "Go ahead") { status } }`;
const DELEGATE = `mutation Delegate($taskId: ID!, $input: DelegateTaskInput!) {
  delegateTask(taskId: $taskId, input: $input) { children { id role } }
}`;
const COMPLETE = `mutation Complete($id: ID!, $input: CompleteTaskInput!) { completeTask(id: $id, input: $input) { status } }`;

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let agent: Caller;
let rootId: string;
let childId: string;
let approvalId: string;

async function ok(document: string, variables: Record<string, unknown>, caller: Caller) {
  const result = await t.graphql<any, Record<string, unknown>>(document, variables, caller);
  expect(result.errors).toBeUndefined();
  return result.data;
}

const modelCall = (model: string, durationMs: number, costUsd: number, tokens: [number, number]) => ({
  model,
  durationMs,
  inputTokens: tokens[0],
  outputTokens: tokens[1],
  costUsd,
  finishReason: 'tool_calls',
});

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-timeline' });
  agent = await t.caller(['agent'], { tenantId: chairman.tenantId, sub: 'agent-timeline' });
  await t.app.services.tenants.ensure(chairman.tenantId);

  // The CEO's task: two model calls, a question to the chairman (approved), claimed again, one more model
  // call, then delegated to the CFO with that attempt's exact cost.
  rootId = await queueTask(t, chairman, 'ceo', 'Prepare the annual audit.');
  await ok(CLAIM, { role: 'ceo' }, agent);
  await ok(
    REPORT,
    {
      taskId: rootId,
      steps: [
        modelCall('gpt-plan', 840, 0.0012, [1000, 200]),
        modelCall('gpt-plan', 1500, 0.0008, [600, 150]),
      ],
    },
    agent,
  );
  approvalId = (await ok(ASK, { taskId: rootId }, agent)).requestTaskApproval.id;
  await ok(APPROVE, { id: approvalId }, chairman);
  await ok(CLAIM, { role: 'ceo' }, agent);
  await ok(REPORT, { taskId: rootId, steps: [modelCall('gpt-plan', 420, 0.0025, [900, 300])] }, agent);
  const delegated = await ok(
    DELEGATE,
    {
      taskId: rootId,
      input: {
        delegations: [{ role: 'cfo', message: 'Gather the ledgers.' }],
        tokensUsed: 1200,
        costUsd: 0.0025,
      },
    },
    agent,
  );
  childId = delegated.delegateTask.children[0].id;
  // The CFO's sub-task is running: claimed, one model call reported.
  await ok(CLAIM, { role: 'cfo' }, agent);
  await ok(REPORT, { taskId: childId, steps: [modelCall('gpt-ledger', 2300, 0.004, [2000, 500])] }, agent);
});

const DIALOG = 'dialog[data-dialog="task"]';
const steps = (page: Page) =>
  page.$$eval(`${DIALOG} [data-timeline] li[data-step-seq]`, (items) =>
    items.map((item) => ({
      seq: Number(item.getAttribute('data-step-seq')),
      kind: item.getAttribute('data-step-kind'),
      duration: item.querySelector('[data-field="step-duration"]')?.textContent,
      cost: item.querySelector('[data-field="step-cost"]')?.getAttribute('data-value'),
      charged: item.getAttribute('data-charged'),
    })),
  );

describe('a task’s timeline', () => {
  let page: Page;

  it('shows the steps in order with their durations and costs', async () => {
    page = await openDashboard(browser, server.url, chairman);
    await page.evaluate((id) => window.boardroomDashboard?.openTask(id), rootId);
    await page.waitForSelector(`${DIALOG} [data-timeline] li[data-step-kind="delegated"]`, {
      timeout: WAIT_MS,
    });
    expect(await steps(page)).toEqual([
      { seq: 1, kind: 'claimed', duration: '—', cost: '0.000000', charged: 'false' },
      { seq: 2, kind: 'model_call', duration: '840 ms', cost: '0.001200', charged: 'false' },
      { seq: 3, kind: 'model_call', duration: '1.5 sec', cost: '0.000800', charged: 'false' },
      { seq: 4, kind: 'approval_requested', duration: '—', cost: '0.000000', charged: 'false' },
      { seq: 5, kind: 'approval_decided', duration: '—', cost: '0.000000', charged: 'false' },
      { seq: 6, kind: 'claimed', duration: '—', cost: '0.000000', charged: 'false' },
      { seq: 7, kind: 'model_call', duration: '420 ms', cost: '0.002500', charged: 'true' },
      { seq: 8, kind: 'delegated', duration: '—', cost: '0.000000', charged: 'true' },
    ]);
    const modelStep = `${DIALOG} li[data-step-seq="7"]`;
    expect(await page.textContent(modelStep)).toContain('gpt-plan');
    expect(await page.textContent(`${modelStep} [data-field="step-cost"]`)).toBe('$0.0025');
    expect(await page.textContent(`${DIALOG} li[data-step-seq="5"]`)).toContain('Go ahead');
    expect(
      await page.getAttribute(`${DIALOG} li[data-step-seq="8"] [data-step-link="subtask"]`, 'data-task-id'),
    ).toBe(childId);
    expect(
      await page.getAttribute(
        `${DIALOG} li[data-step-seq="4"] [data-step-link="approval"]`,
        'data-approval-id',
      ),
    ).toBe(approvalId);
    // The delegation tree is still there, below the timeline.
    expect(await page.$(`${DIALOG} [data-subtask="${childId}"]`)).not.toBeNull();
    await page.locator(`${DIALOG} [data-timeline]`).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-timeline');

    const violations = await accessibilityViolations(page);
    expect(describeViolations(violations)).toEqual([]);
  });

  it('opens the sub-task of a delegation step with the keyboard, its focus visible', async () => {
    const link = page.locator(`${DIALOG} li[data-step-seq="8"] [data-step-link="subtask"]`);
    // Tab reaches it from the link before it (the decided approval's): nothing in between takes focus.
    await page.locator(`${DIALOG} li[data-step-seq="5"] [data-step-link="approval"]`).focus();
    await page.keyboard.press('Tab');
    expect(await link.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(await link.evaluate((element) => element.matches(':focus-visible'))).toBe(true);
    await browser.screenshot(page, 'console-task-timeline-focus');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`${DIALOG} [data-task-detail="${childId}"] li[data-step-kind="model_call"]`, {
      timeout: WAIT_MS,
    });
    expect((await steps(page)).map((step) => [step.seq, step.kind, step.duration, step.cost])).toEqual([
      [1, 'claimed', '—', '0.000000'],
      [2, 'model_call', '2.3 sec', '0.004000'],
    ]);
  });

  it('shows a model call the running sub-task reports at once, with no change of status', async () => {
    const detail = `${DIALOG} [data-task-detail="${childId}"]`;
    await page.waitForSelector(`${detail} [data-timeline][data-live="true"]`, { timeout: WAIT_MS });
    await ok(REPORT, { taskId: childId, steps: [modelCall('gpt-ledger', 600, 0.001, [300, 100])] }, agent);
    await page.waitForSelector(`${detail} li[data-step-seq="3"][data-step-kind="model_call"]`, {
      timeout: WAIT_MS,
    });
    expect((await steps(page)).map((step) => [step.seq, step.kind, step.duration, step.cost])).toEqual([
      [1, 'claimed', '—', '0.000000'],
      [2, 'model_call', '2.3 sec', '0.004000'],
      [3, 'model_call', '600 ms', '0.001000'],
    ]);
    // Nothing but the step changed: the task is still running.
    expect(await page.getAttribute(detail, 'data-status')).toBe('running');
    expect(await page.textContent(`${detail} li[data-step-seq="3"]`)).toContain('300 in / 100 out tokens');
    await page.locator(`${detail} li[data-step-seq="3"]`).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-timeline-live-step');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
  });

  it('shows a new step as soon as the running sub-task records it', async () => {
    const deliverables = [{ kind: 'LINK', title: 'Ledgers', url: 'https://example.com/ledgers' }];
    await ok(
      COMPLETE,
      { id: childId, input: { output: 'Ledgers gathered.', tokensUsed: 2900, costUsd: 0.005, deliverables } },
      agent,
    );
    await page.waitForSelector(`${DIALOG} [data-task-detail="${childId}"] li[data-step-kind="completed"]`, {
      timeout: WAIT_MS,
    });
    expect((await steps(page)).map((step) => [step.seq, step.kind, step.charged])).toEqual([
      [1, 'claimed', 'false'],
      [2, 'model_call', 'true'],
      [3, 'model_call', 'true'],
      [4, 'completed', 'true'],
    ]);
    // The detail around the timeline follows too: the deliverable the completion carried.
    await page.waitForSelector(
      `${DIALOG} [data-field="deliverables"] a[href="https://example.com/ledgers"]`,
      {
        timeout: WAIT_MS,
      },
    );
    await page.locator(`${DIALOG} [data-timeline]`).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-timeline-live');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
  });

  it('shows the approval of an approval step in the inbox', async () => {
    await page.evaluate((id) => window.boardroomDashboard?.openTask(id), rootId);
    const link = `${DIALOG} [data-task-detail="${rootId}"] li[data-step-seq="4"] [data-step-link="approval"]`;
    await page.waitForSelector(link, { timeout: WAIT_MS });
    await page.locator(link).focus();
    await page.keyboard.press('Space');
    await page.waitForSelector(DIALOG, { state: 'detached', timeout: WAIT_MS });
    await page.waitForFunction(
      (id) => document.activeElement?.getAttribute('data-approval-id') === id,
      approvalId,
      { timeout: WAIT_MS },
    );
    expect(
      await page.getAttribute(`[data-approvals] [data-approval-id="${approvalId}"]`, 'data-status'),
    ).toBe('approved');
    await browser.screenshot(page, 'console-task-timeline-approval');
  });

  it('shows the first 100 steps of a long run and the next ones with More steps', async () => {
    const longId = await queueTask(t, chairman, 'coo', 'Reconcile every invoice.');
    await ok(CLAIM, { role: 'coo' }, agent);
    const calls = Array.from({ length: 150 }, (_, index) =>
      modelCall('gpt-bulk', 100 + index, 0.0001, [10, 5]),
    );
    await ok(REPORT, { taskId: longId, steps: calls }, agent);
    await page.evaluate((id) => window.boardroomDashboard?.openTask(id), longId);
    const shown = `${DIALOG} [data-task-detail="${longId}"] li[data-step-seq]`;
    await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 100, shown, {
      timeout: WAIT_MS,
    });
    await page.locator(`${DIALOG} [data-steps-more]`).focus();
    await browser.screenshot(page, 'console-task-timeline-more');
    await page.keyboard.press('Enter');
    await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 151, shown, {
      timeout: WAIT_MS,
    });
    const seqs = (await steps(page)).map((step) => step.seq);
    expect(seqs).toEqual(Array.from({ length: 151 }, (_, index) => index + 1));
    expect(await page.$(`${DIALOG} [data-steps-more]`)).toBeNull();
  });
});
