import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_LIMITS,
  operationOf,
  parseWithinLimits,
  rootFieldNamesOf,
} from '../../src/validation/document-limits.js';

function rootFields(source: string, operationName?: string): string[] {
  const document = parse(source, { noLocation: true });
  const operation = operationOf(document, operationName);
  if (!operation) throw new Error('no operation');
  return [...rootFieldNamesOf(document, operation)].sort();
}

describe('rootFieldNamesOf', () => {
  it('collects root fields through inline fragments and spreads', () => {
    expect(
      rootFields(
        'query { me { sub } ... on Query { agents { role } } ...Vitals } fragment Vitals on Query { a: agentVitals(role: "ceo") { agentRole } }',
      ),
    ).toEqual(['agentVitals', 'agents', 'me']);
  });

  it('ends on a fragment cycle', () => {
    expect(
      rootFields(
        'query { ...A } fragment A on Query { me { sub } ...B } fragment B on Query { agents { role } ...A }',
      ),
    ).toEqual(['agents', 'me']);
  });

  it('enters each fragment once however often it is spread: a 64-deep doubling chain ends', () => {
    const depth = 64;
    const fragments = Array.from(
      { length: depth },
      (_, index) => `fragment F${index} on Query { ...F${index + 1} ...F${index + 1} }`,
    );
    const source = ['query { ...F0 }', ...fragments, `fragment F${depth} on Query { me { sub } }`].join('\n');

    expect(rootFields(source)).toEqual(['me']);
  });

  it('picks the named operation, or the only one', () => {
    const source = 'query A { me { sub } } query B { agents { role } }';
    expect(rootFields(source, 'B')).toEqual(['agents']);
    expect(operationOf(parse(source), undefined)).toBeUndefined();
  });
});

describe('parseWithinLimits', () => {
  it('refuses a document over the token limit before parsing the rest of it', () => {
    const source = `{ ${'me { sub } '.repeat(DOCUMENT_LIMITS.maxTokens)} }`;
    expect(() => parseWithinLimits(source)).toThrow(/more tha[nt] 5000 tokens/);
  });

  it('refuses a document nested deeper than the nesting limit without recursing into it', () => {
    const source = `{ me(x: ${'['.repeat(100_000)}) }`;
    expect(() => parseWithinLimits(source)).toThrow('The document is nested deeper than 128 levels');
  });

  it('parses a document within both', () => {
    expect(parseWithinLimits('{ me { sub } }').definitions).toHaveLength(1);
  });
});
