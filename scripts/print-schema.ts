// Prints the Pothos schema, sorted, to schema.graphql (or checks it with --check).
import { readFile, writeFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { schema } from '../src/schema/index.js';

const file = new URL('../schema.graphql', import.meta.url);
const printed = `${printSchema(schema)}\n`;
if (process.argv.includes('--check')) {
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current !== printed) {
    console.error('schema.graphql is out of date: run `npm run schema`.');
    process.exit(1);
  }
} else {
  await writeFile(file, printed);
  console.log('wrote schema.graphql');
}
