import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { databaseKind } from '../support/database.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

// Files only: one project is enough.
describe.runIf(databaseKind === 'pglite')('the production start command', () => {
  const start: string = JSON.parse(read('package.json')).scripts.start;

  it('is node with its flags on dist/main.js', () => {
    expect(start).toMatch(/^node( --[\w-]+(=\S+)?)* dist\/main\.js$/);
  });

  it('is what the container runs', () => {
    const cmd = read('Dockerfile')
      .split('\n')
      .filter((line) => line.startsWith('CMD '))
      .at(-1);
    expect(JSON.parse(cmd?.slice('CMD '.length) ?? 'null')).toEqual(start.split(' '));
  });
});
