import type { Page } from 'playwright-core';
import { afterAll, expect } from 'vitest';
import { graphql } from '../../../src/generated/graphql/index.js';
import type { Caller, TestApp, TestAppOptions } from '../../support/app.js';
import { type ListeningApp, serveTestApp } from '../../support/fixtures.js';
import { type Browser, launchBrowser } from './browser.js';

export const SetLiveMode = graphql(`
  mutation DashboardLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

export const ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo', 'chro', 'clo'];

/** Bound of every wait on the page (the requirement is 1 s for a pause, 2 s for vitals). */
export const WAIT_MS = 5000;

export const card = (role: string, state: string) => `[data-role="${role}"][data-state="${state}"]`;

/**
 * serveTestApp with a browser launched after it, for the tests of the block that calls this; after them the
 * browser closes first, then the server and the app. The page is the build in dist/dashboard, made by the
 * browser project's global setup (test/support/ensure-build.ts) when older than its sources: built once,
 * never while another file's browser reads it.
 */
export function serveDashboard(
  ready: (made: ListeningApp & { browser: Browser }) => unknown,
  options: TestAppOptions = {},
): void {
  let browser: Browser | undefined;
  serveTestApp(async (app) => {
    browser = await launchBrowser();
    await ready({ ...app, browser });
  }, options);
  afterAll(() => browser?.close());
}

/** Opens the dashboard with a token in the fragment and waits until its first reads are on the page. */
export async function openDashboard(
  browser: { open(url: string): Promise<Page> },
  url: string,
  caller: Caller,
): Promise<Page> {
  const page = await browser.open(`${url}/dashboard#token=${caller.token}`);
  await page.waitForSelector('main[data-loaded="true"]', { timeout: WAIT_MS });
  await page.waitForSelector('[data-connection="live"]', { timeout: WAIT_MS });
  return page;
}

/** Pauses a role over REST as `chairman`; answers the event id. */
export async function pauseOverRest(
  t: TestApp,
  chairman: Caller,
  role: string,
  verb = 'pause',
): Promise<string> {
  const response = await t.rest('POST', `/api/v1/dogfood/agents/${role}/${verb}`, {
    caller: chairman,
    body: { actor_user_id: chairman.sub, reason: 'secret reason' },
  });
  expect(response.status).toBe(200);
  return response.body.event_id;
}

/** The text of an element, waiting until it reads `text`. */
export async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    ({ selector, text }) => document.querySelector(selector)?.textContent === text,
    { selector, text },
    { timeout: WAIT_MS },
  );
}

/** Waits until the text of an element matches `pattern`. */
export async function waitForMatch(page: Page, selector: string, pattern: RegExp): Promise<void> {
  await page.waitForFunction(
    ({ selector, source, flags }) =>
      new RegExp(source, flags).test(document.querySelector(selector)?.textContent ?? ''),
    { selector, source: pattern.source, flags: pattern.flags },
    { timeout: WAIT_MS },
  );
}

declare global {
  interface Window {
    /** dashboard/src/dashboard.tsx, DashboardHandle. */
    boardroomDashboard?: {
      disconnect(): void;
      reconnect(): void;
      confirm(role: string, action: 'pause' | 'resume'): void;
      openTask(id: string): void;
      decideApproval(id: string, decision: 'approve' | 'reject' | 'request_changes'): void;
      decideTaskApproval(id: string, decision: 'approve' | 'reject' | 'request_changes'): void;
      setBudget(role: string | null): void;
    };
  }
}
