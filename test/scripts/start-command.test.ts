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

describe.runIf(databaseKind === 'pglite')('the container’s Node.js', () => {
  const images = read('Dockerfile')
    .split('\n')
    .filter((line) => line.startsWith('FROM '))
    .map((line) => line.split(/\s+/)[1]);

  it('is one Node line in both stages, the one CI runs the whole suite on', () => {
    expect(images).toEqual(['node:24-slim', 'node:24-slim']);
    expect(read('.ci/run')).toMatch(/NODE24_PACKAGE:-node-linux-\$arch@24\b/);
  });

  it('is a line package.json’s engines allow', () => {
    const engines: string = JSON.parse(read('package.json')).engines.node;
    expect(engines.split('||').map((range) => range.trim())).toContain('>=24');
  });
});
