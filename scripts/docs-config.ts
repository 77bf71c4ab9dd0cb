// Writes docs/configuration.md from src/config.ts (or checks it with --check): every variable, its default
// and what it does. The descriptions live in src/config.ts (ENVIRONMENT_DOCS), the defaults in its schema.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  BUILD_ENVIRONMENT_DOCS,
  ENVIRONMENT_DOCS,
  environmentDefaults,
  type VariableDocs,
} from '../src/config.js';

export const CONFIGURATION_PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/** A parsed default as the page shows it: `unset` for nothing, the value in code otherwise. */
function shownDefault(name: string, value: unknown): string {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return 'unset';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return `\`${value}\``;
  throw new Error(`${name}: its parsed default is not text; give it a shownDefault in src/config.ts`);
}

function row(name: string, docs: VariableDocs, value: unknown): string {
  const given = docs.shownDefault === undefined ? shownDefault(name, value) : docs.shownDefault;
  const cell = /^\d/.test(given) ? `\`${given}\`` : given;
  return `| \`${name}\` | ${cell} | ${docs.meaning} |`;
}

/** The page, as `npm run docs:config` writes it. */
export function configurationPage(): string {
  const defaults = environmentDefaults();
  const rows = [
    ...Object.entries(ENVIRONMENT_DOCS).map(([name, docs]) =>
      row(name, docs, defaults[name as keyof typeof defaults]),
    ),
    ...Object.entries(BUILD_ENVIRONMENT_DOCS).map(([name, docs]) => row(name, docs, undefined)),
  ];
  return `# Configuration

<!-- Written by \`npm run docs:config\` from src/config.ts; edit the descriptions there. -->

Boardroom reads its configuration from the environment once, at start-up (\`loadConfig\` in
\`src/config.ts\`); an invalid value stops the start with a line naming it. What each limit does when it is
reached: [limits.md](limits.md).

| Variable | Default | Meaning |
| --- | --- | --- |
${rows.join('\n')}

Without \`METRICS_PORT\` or \`METRICS_TOKEN\`, \`/metrics\` is served openly only by a development instance
bound to loopback; in production it is off until one of them is set. See
[operations.md](operations.md#metrics-and-traces) for every metric and span. A test fails when the code
reads a variable this page does not list, and when this page differs from what \`npm run docs:config\` writes.
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = configurationPage();
  if (process.argv.includes('--check')) {
    const current = await readFile(CONFIGURATION_PAGE, 'utf8').catch(() => '');
    if (current !== page) {
      console.error('docs/configuration.md is out of date: run `npm run docs:config`.');
      process.exit(1);
    }
  } else {
    await writeFile(CONFIGURATION_PAGE, page);
    console.log('wrote docs/configuration.md');
  }
}
