import { readFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';

describe('schema.graphql', () => {
  it('matches the schema printed from the Pothos builder (run `npm run schema` after a change)', async () => {
    const committed = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printSchema(schema)}\n`);
  });
});
