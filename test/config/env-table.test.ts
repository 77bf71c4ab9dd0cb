import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_PAGE, configurationPage } from '../../scripts/docs-config.js';
import { databaseKind } from '../support/database.js';

const root = path.resolve(import.meta.dirname, '../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|mjs)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !file.includes(`${path.sep}generated${path.sep}`));
}

/** Every environment variable the service and its scripts read: `process.env.X` and the keys of src/config.ts. */
async function variablesRead(): Promise<Set<string>> {
  const names = new Set<string>();
  const files = (await Promise.all(['src', 'rest', 'scripts'].map(sourceFiles))).flat();
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)) {
      names.add((match[1] ?? match[2]) as string);
    }
  }
  const config = await readFile(path.join(root, 'src/config.ts'), 'utf8');
  for (const match of config.matchAll(/^\s+([A-Z][A-Z0-9_]*)\s*:/gm)) names.add(match[1] as string);
  return names;
}

/** Variables named in the first cell of a row of the table of docs/configuration.md. */
async function documented(): Promise<Set<string>> {
  const section = await readFile(path.join(root, 'docs/configuration.md'), 'utf8');
  const names = new Set<string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const firstCell = row.split('|')[1] ?? '';
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1] as string);
  }
  return names;
}

// Reads files only: one project is enough.
describe.runIf(databaseKind === 'pglite')('docs/configuration.md', () => {
  it('lists every environment variable the code reads', async () => {
    const table = await documented();
    const missing = [...(await variablesRead())].filter((name) => !table.has(name)).sort();
    expect(missing).toEqual([]);
  });

  it('lists every variable docs/limits.md names as the setting of a limit', async () => {
    const limits = await readFile(path.join(root, 'docs/limits.md'), 'utf8');
    const settings = [
      ...limits.matchAll(/`([A-Z][A-Z0-9_]*(?:_MS|_BYTES|_SIZE|_SECONDS|_HOURS|_PER_[A-Z]+))`/g),
    ].map((match) => match[1] as string);
    expect(settings.length).toBeGreaterThan(20);
    const table = await documented();
    expect(settings.filter((name) => !table.has(name))).toEqual([]);
  });

  it('is what `npm run docs:config` writes from src/config.ts (run it after changing a variable)', async () => {
    expect(await readFile(CONFIGURATION_PAGE, 'utf8')).toBe(configurationPage());
  });
});
