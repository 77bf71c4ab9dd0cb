import { readdir, readFile } from 'node:fs/promises';
import {
  type DocumentNode,
  getOperationAST,
  getVariableValues,
  type OperationDefinitionNode,
  parse,
  validate,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';

interface Example {
  /** Where it is: file and line of its opening fence (or of the curl line). */
  at: string;
  source: string;
  /** The JSON block that follows a GraphQL block: its variables. */
  variables?: Record<string, unknown>;
}

/** The README, every page under docs/ (decision records included) and the bench's page. */
const FILES = [
  'README.md',
  'bench/README.md',
  ...(await readdir('docs', { recursive: true }))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name.split('\\').join('/')}`)
    .sort(),
];

/** Every GraphQL example of a Markdown file: ```graphql blocks, and the `query` of curl calls to /graphql. */
function examplesOf(file: string, text: string): Example[] {
  const examples: Example[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  const blocks = [...text.matchAll(fence)].map((match) => ({
    language: match[1],
    body: match[2] as string,
    line: text.slice(0, match.index).split('\n').length,
  }));
  blocks.forEach((block, index) => {
    const at = `${file}:${block.line}`;
    if (block.language === 'graphql') {
      const next = blocks[index + 1];
      const variables = next?.language === 'json' ? JSON.parse(next.body) : undefined;
      examples.push({ at, source: block.body, ...(variables ? { variables } : {}) });
    }
    if (block.language === 'sh') {
      for (const call of block.body.matchAll(/\/graphql[^\n]*(?:\\\n[^\n]*)*?-d '([^']*)'/g)) {
        const payload = JSON.parse(call[1] as string) as { query?: string };
        if (payload.query) examples.push({ at: `${at} (curl)`, source: payload.query });
      }
    }
  });
  return examples;
}

/** The problems of an example against the schema: syntax, validation, then each operation's variables. */
function problemsOf(example: Example): string[] {
  let document: DocumentNode;
  try {
    document = parse(example.source);
  } catch (error) {
    return [(error as Error).message];
  }
  const invalid = validate(schema, document).map((error) => error.message);
  if (invalid.length > 0) return invalid;
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === 'OperationDefinition',
  );
  return operations.flatMap((operation) => {
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], example.variables ?? {});
    return coerced.errors?.map((error) => error.message) ?? [];
  });
}

const examples = (
  await Promise.all(FILES.map(async (file) => examplesOf(file, await readFile(file, 'utf8'))))
).flat();

describe('the GraphQL examples of the README and docs', () => {
  it('are found (a block the extraction missed would go unchecked)', () => {
    expect(FILES).toContain('docs/api-examples.md');
    const inReadme = examples.filter((example) => example.at.startsWith('README.md'));
    expect(inReadme.length).toBeGreaterThanOrEqual(2);
    const inExamples = examples.filter((example) => example.at.startsWith('docs/api-examples.md'));
    expect(inExamples.length).toBeGreaterThanOrEqual(4);
    expect(inExamples.some((example) => example.source.includes('invokeConnector'))).toBe(true);
  });

  it.each(examples.map((example) => [example.at, example] as const))(
    '%s parses and validates against the schema, variables included',
    (_at, example) => {
      expect(problemsOf(example)).toEqual([]);
      const document = parse(example.source);
      // One operation per block, so that each can be pasted into GraphiQL and run as it is.
      expect(getOperationAST(document)).not.toBeNull();
    },
  );
});
