import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CHROMIUM } from './chromium.js';

const SCREENSHOTS = path.resolve('test-results/screenshots');

export interface Browser {
  /** A new tab that records every request it makes; `javaScript: false` opens it with scripts disabled. */
  open(url: string, options?: { javaScript?: boolean }): Promise<Page>;
  /** Every URL requested by any tab so far. */
  requests(): string[];
  /** The requests that went anywhere but `origin` (or to data: and blob: URLs). */
  foreignRequests(origin: string): string[];
  /**
   * Every Content-Security-Policy violation any tab reported so far: `securitypolicyviolation` events and
   * the console messages Chromium writes for them (workers included).
   */
  cspViolations(): string[];
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** Headless Chromium on a fresh profile, with everything that phones home switched off. */
export async function launchBrowser(): Promise<Browser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'boardroom-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-quic',
      '--disable-sync',
    ],
  });
  const seen: string[] = [];
  context.on('request', (request) => {
    seen.push(request.url());
  });
  const violations: string[] = [];
  await context.exposeBinding('reportCspViolation', (_source, violation: string) => {
    violations.push(violation);
  });
  await context.addInitScript(() => {
    const report = (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation;
    document.addEventListener('securitypolicyviolation', (event) => {
      report(
        `${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} (${event.sourceFile}:${event.lineNumber})`,
      );
    });
  });
  return {
    async open(url, { javaScript = true } = {}) {
      const page = await context.newPage();
      // Fail inside the test's own timeout with Playwright's message, not with a bare vitest timeout.
      page.setDefaultTimeout(10_000);
      page.on('request', (request) => {
        seen.push(request.url());
      });
      page.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
      });
      page.on('worker', (worker) => {
        worker.on('console', (message) => {
          if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
        });
      });
      if (!javaScript) {
        const cdp = await context.newCDPSession(page);
        await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
      }
      await page.goto(url);
      return page;
    },
    requests: () => [...new Set(seen)],
    foreignRequests(origin) {
      return [...new Set(seen)].filter(
        (url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
      );
    },
    cspViolations: () => [...violations],
    async screenshot(page, name) {
      await mkdir(SCREENSHOTS, { recursive: true });
      const file = path.join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: false });
      return file;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
