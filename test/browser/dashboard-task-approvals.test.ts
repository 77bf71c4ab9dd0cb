import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expireTaskApprovals } from '../../src/domain/agents/task-approvals.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { ClaimTask, queueTask } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { accessibilityViolations, describeViolations } from './support/axe.js';
import type { Browser } from './support/browser.js';
import { openDashboard, serveDashboard, WAIT_MS, waitForMatch, waitForText } from './support/dashboard.js';

// The decisions agents ask for on their running tasks, in the console's approval inbox: the chairman and
// an operator decide them there; a member sees nothing of them.

const AskForDecision = graphql(`
  mutation ConsoleAskForDecision($taskId: ID!, $input: TaskApprovalRequestInput!) {
    requestTaskApproval(taskId: $taskId, input: $input) {
      id
      status
    }
  }
`);

const TaskWithDecision = graphql(`
  query ConsoleTaskWithDecision($id: ID!) {
    task(id: $id) {
      id
      status
      approval {
        id
        status
        note
        decidedBy
      }
    }
  }
`);

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let operator: Caller;
let member: Caller;
let agent: Caller;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  member = await t.caller(['member'], { sub: 'member-inbox' });
  const same = { tenantId: member.tenantId };
  chairman = await t.caller(['chairman'], { ...same, sub: 'chair-inbox' });
  operator = await t.caller(['operator'], { ...same, sub: 'op-inbox' });
  agent = await t.caller(['agent'], { ...same, sub: 'agent-inbox' });
  await t.app.services.tenants.ensure(member.tenantId);
});

/** A task of `role` queued by a member and claimed by the agent, which then asks for a decision on it. */
async function agentAsks(role: string, summary: string, payload: unknown) {
  const taskId = await queueTask(t, member, role, `Work for ${role}`);
  const claimed = await t.graphql(ClaimTask, { role }, agent);
  expect(claimed.data?.claimTask?.id).toBe(taskId);
  const asked = await t.graphql(AskForDecision, { taskId, input: { summary, payload } }, agent);
  expect(asked.errors).toBeUndefined();
  return { taskId, approvalId: asked.data?.requestTaskApproval.id ?? '' };
}

const taskState = async (id: string) => (await t.graphql(TaskWithDecision, { id }, chairman)).data?.task;
const storedStatus = async (id: string) =>
  (await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } })).status;

const item = (id: string) => `[data-approvals] [data-approval-id="${id}"]`;
const DIALOG = 'dialog[data-dialog="approval"]';

/** Opens a confirmation through window.boardroomDashboard, submits it and answers its refusal. */
async function forcedRefusal(page: Page, id: string): Promise<string> {
  await page.evaluate((target) => window.boardroomDashboard?.decideTaskApproval(target, 'approve'), id);
  await page.waitForSelector(DIALOG, { timeout: WAIT_MS });
  await page.click(`${DIALOG} button[type="submit"]`);
  const problem = await page.waitForSelector(`${DIALOG} [role="alert"]`, { timeout: WAIT_MS });
  return (await problem.textContent()) ?? '';
}

describe('an agent’s question in the chairman’s inbox', () => {
  let page: Page;
  let offer: { taskId: string; approvalId: string };

  it('shows what kind of request it is, with the role, summary, payload and a link to the task', async () => {
    offer = await agentAsks('cfo', 'Send the offer to Acme?', { amount: 1200, currency: 'USD' });
    page = await openDashboard(browser, server.url, chairman);
    const entry = item(offer.approvalId);
    await page.waitForSelector(`${entry}[data-kind="task"][data-status="pending"]`, { timeout: WAIT_MS });
    await waitForText(page, '[data-approvals-waiting] .count', '1');
    expect(await page.textContent(`${entry} [data-field="kind"]`)).toBe('Agent’s question on a task');
    expect(await page.textContent(`${entry} [data-field="summary"]`)).toBe('Send the offer to Acme?');
    expect(await page.textContent(`${entry} [data-field="role"]`)).toBe('CFO');
    expect(await page.textContent(`${entry} [data-field="payload"]`)).toBe(
      '{"amount":1200,"currency":"USD"}',
    );
    expect(await page.$$(`${entry} button[data-decide-approval]`)).toHaveLength(3);
    await page.locator('#approvals-heading').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-approval-inbox');

    await page.click(`${entry} [data-field="task"]`);
    await page.waitForSelector(`dialog[data-dialog="task"] [data-task-detail="${offer.taskId}"]`, {
      timeout: WAIT_MS,
    });
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog[data-dialog="task"]', { state: 'detached', timeout: WAIT_MS });
  });

  it('approves it with a note after a confirmation: the task is back in the queue with the decision', async () => {
    await page.click(`${item(offer.approvalId)} button[data-decide-approval="approve"]`);
    await page.waitForSelector(`${DIALOG} form[data-kind="task"]`, { timeout: WAIT_MS });
    expect(await page.textContent(`${DIALOG} h2`)).toBe('Approve “Send the offer to Acme?”');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.fill(`${DIALOG} textarea[name="note"]`, 'Go ahead at that price');
    await browser.screenshot(page, 'console-task-approval-approve');
    await page.click(`${DIALOG} button[type="submit"]`);
    await page.waitForSelector(`${item(offer.approvalId)}[data-status="approved"]`, { timeout: WAIT_MS });
    await waitForMatch(page, `${item(offer.approvalId)} [data-field="decision"]`, /Go ahead at that price/);
    await waitForText(page, '[data-approvals-waiting] .count', '0');
    expect(await page.$$(`${item(offer.approvalId)} button[data-decide-approval]`)).toEqual([]);
    expect(await taskState(offer.taskId)).toEqual({
      id: offer.taskId,
      status: 'pending',
      approval: {
        id: offer.approvalId,
        status: 'approved',
        note: 'Go ahead at that price',
        decidedBy: chairman.sub,
      },
    });
  });

  it('arrives live, and refuses a rejection without a note: nothing is sent', async () => {
    const hire = await agentAsks('chro', 'Hire the second candidate?', null);
    await page.waitForSelector(`${item(hire.approvalId)}[data-status="pending"]`, { timeout: WAIT_MS });
    await waitForText(page, '[data-approvals-waiting] .count', '1');
    await page.click(`${item(hire.approvalId)} button[data-decide-approval="reject"]`);
    await page.waitForSelector(`${DIALOG} form[data-kind="task"][data-decision="reject"]`, {
      timeout: WAIT_MS,
    });
    expect(await page.textContent(`${DIALOG} label`)).toMatch(/^Note \(required: say why/);
    expect(await page.getAttribute(`${DIALOG} textarea[name="note"]`, 'aria-required')).toBe('true');
    await page.click(`${DIALOG} button[type="submit"]`);
    await waitForText(
      page,
      `${DIALOG} [role="alert"]`,
      'A rejection needs a note saying why: the agent reads it.',
    );
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('note');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await browser.screenshot(page, 'console-task-approval-reject-needs-note');
    expect(await storedStatus(hire.approvalId)).toBe('pending');
    expect((await taskState(hire.taskId))?.status).toBe('awaiting_approval');

    await page.fill(`${DIALOG} textarea[name="note"]`, 'We froze hiring');
    await page.click(`${DIALOG} button[type="submit"]`);
    await page.waitForSelector(`${item(hire.approvalId)}[data-status="rejected"]`, { timeout: WAIT_MS });
    await waitForText(page, '[data-approvals-waiting] .count', '0');
    expect(await taskState(hire.taskId)).toMatchObject({
      status: 'pending',
      approval: { status: 'rejected', note: 'We froze hiring', decidedBy: chairman.sub },
    });
    await page.waitForSelector('.feed li.approval', { timeout: WAIT_MS });
    await page.locator('#approvals-heading').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-approval-decided');
  });

  it('shows the server’s refusal of a decision on an unknown request', async () => {
    expect(await forcedRefusal(page, randomUUID())).toMatch(/not found/i);
    await page.click(`${DIALOG} button[type="button"]`);
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.close();
  });
});

describe('an agent’s question in an operator’s inbox', () => {
  it('is decided by the operator (changes requested, with the note)', async () => {
    const launch = await agentAsks('cmo', 'Launch the spring campaign?', { budgetUsd: 5000 });
    const page = await openDashboard(browser, server.url, operator);
    const entry = item(launch.approvalId);
    await page.waitForSelector(`${entry}[data-kind="task"][data-status="pending"]`, { timeout: WAIT_MS });
    await waitForText(page, '[data-approvals-waiting] .count', '1');
    await page.click(`${entry} button[data-decide-approval="request_changes"]`);
    await page.waitForSelector(`${DIALOG} form[data-kind="task"]`, { timeout: WAIT_MS });
    await page.fill(`${DIALOG} textarea[name="note"]`, 'Halve the budget');
    await page.click(`${DIALOG} button[type="submit"]`);
    await page.waitForSelector(`${entry}[data-status="changes_requested"]`, { timeout: WAIT_MS });
    expect(await taskState(launch.taskId)).toMatchObject({
      status: 'pending',
      approval: { status: 'changes_requested', note: 'Halve the budget', decidedBy: operator.sub },
    });
    await page.locator('#approvals-heading').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-approval-operator');
    await page.close();
  });
});

describe('an agent’s question and another tenant’s console', () => {
  it('shows none of this tenant’s questions, and its decision on one is refused as unknown', async () => {
    const deal = await agentAsks('cpo', 'Ship the beta?', { build: 42 });
    const stranger = await t.caller(['chairman'], { sub: 'chair-elsewhere' });
    await t.app.services.tenants.ensure(stranger.tenantId);
    const page = await openDashboard(browser, server.url, stranger);
    await waitForText(page, '[data-approvals-waiting] .count', '0');
    expect(await page.$$('[data-approvals] [data-approval-id]')).toEqual([]);
    expect(await forcedRefusal(page, deal.approvalId)).toMatch(/not found/i);
    await page.click(`${DIALOG} button[type="button"]`);
    expect(await storedStatus(deal.approvalId)).toBe('pending');
    expect((await taskState(deal.taskId))?.status).toBe('awaiting_approval');
    await page.close();
  });
});

describe('a question nobody decided in time', () => {
  const awaiting = () =>
    t.db.prisma.task.count({ where: { tenantId: member.tenantId, status: 'awaiting_approval' } });
  const shownAwaiting = (page: Page) =>
    page.getAttribute('.summary [data-task-status="awaiting_approval"] .count', 'data-value');

  it('counts tasks awaiting approval in the summary, then shows the question as expired, without decisions', async () => {
    const contract = await agentAsks('coo', 'Renew the office lease?', { years: 3 });
    const page = await openDashboard(browser, server.url, chairman);
    await page.waitForSelector(`${item(contract.approvalId)}[data-status="pending"]`, { timeout: WAIT_MS });
    const before = await awaiting();
    expect(before).toBeGreaterThanOrEqual(1);
    await waitForText(page, '.summary [data-task-status="awaiting_approval"] .count', String(before));
    expect(await page.textContent('.summary [data-task-status="awaiting_approval"] .count-label')).toBe(
      'Awaiting approval',
    );
    expect(await page.textContent(`${item(contract.approvalId)} [data-field="expires-at"]`)).not.toBe('');

    await t.db.prisma.taskApproval.update({
      where: { id: contract.approvalId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await expireTaskApprovals(t.db.prisma);
    await waitForText(page, '.summary [data-task-status="awaiting_approval"] .count', String(before - 1));
    expect(await shownAwaiting(page)).toBe(String(await awaiting()));

    await page.selectOption('[data-filter="approval-status"]', 'expired');
    const entry = `${item(contract.approvalId)}[data-status="expired"]`;
    await page.waitForSelector(entry, { timeout: WAIT_MS });
    await waitForMatch(page, `${entry} [data-field="decision"]`, /^Expired: nobody decided before/);
    expect(await page.textContent(`${entry} .badge`)).toBe('expired');
    expect(await page.$$(`${entry} button[data-decide-approval]`)).toEqual([]);
    expect(await taskState(contract.taskId)).toEqual({
      id: contract.taskId,
      status: 'pending',
      approval: { id: contract.approvalId, status: 'expired', note: null, decidedBy: null },
    });
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.locator('.summary').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-approval-expired-summary');
    await page.locator(entry).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-task-approval-expired');
    await page.close();
  });
});

describe('an agent’s question and a member', () => {
  it('shows no inbox, no count and no approval event; a decision forced through the page is refused', async () => {
    const memo = await agentAsks('clo', 'Sign the NDA?', { counterparty: 'Initech' });
    const page = await openDashboard(browser, server.url, member);
    await page.waitForSelector('[data-role="clo"]', { timeout: WAIT_MS });
    expect(await page.$('[data-approvals]')).toBeNull();
    expect(await page.$('[data-approvals-waiting]')).toBeNull();
    expect(await page.$('.feed li.approval')).toBeNull();
    expect(await forcedRefusal(page, memo.approvalId)).toBe('Not allowed for your role');
    await page.click(`${DIALOG} button[type="button"]`);
    expect(await storedStatus(memo.approvalId)).toBe('pending');
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await browser.screenshot(page, 'console-task-approval-member');
    await page.close();
  });

  it('requested nothing from another host and broke no CSP rule', () => {
    expect(browser.foreignRequests(server.url)).toEqual([]);
    expect(browser.cspViolations()).toEqual([]);
  });
});
