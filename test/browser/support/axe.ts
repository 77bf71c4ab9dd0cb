import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** WCAG 2.0, 2.1 and 2.2, levels A and AA. */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

let source: Promise<string> | undefined;

export interface Violation {
  rule: string;
  impact: string | null;
  help: string;
  /** Each element that fails: its selector and what is wrong with it. */
  nodes: { target: string; html: string; summary: string }[];
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's Content-Security-Policy
 * does not apply to it and needs no exception) and answers the violations of WCAG 2.2 A and AA.
 * `exclude` lists selectors of parts that are not ours to fix, reported apart by the caller.
 */
export async function accessibilityViolations(
  page: Page,
  context?: { exclude?: string[] },
): Promise<Violation[]> {
  source ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const script = await source;
  await page.evaluate(script);
  return page.evaluate(
    async ({ tags, exclude }) => {
      const axe = (window as unknown as { axe: any }).axe;
      const result = await axe.run(exclude?.length ? { exclude: exclude.map((one) => [one]) } : document, {
        runOnly: { type: 'tag', values: tags },
        resultTypes: ['violations'],
      });
      return result.violations.map((violation: any) => ({
        rule: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.map((node: any) => ({
          target: node.target.join(' '),
          html: String(node.html).slice(0, 200),
          summary: node.failureSummary,
        })),
      }));
    },
    { tags: TAGS, exclude: context?.exclude },
  );
}

/** Violations as lines a person can read in a failed assertion. */
export const describeViolations = (violations: Violation[]) =>
  violations.flatMap((violation) =>
    violation.nodes.map(
      (node) => `${violation.rule} (${violation.impact}): ${node.target} — ${violation.help}`,
    ),
  );
