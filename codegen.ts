import type { CodegenConfig } from '@graphql-codegen/cli';

const config = {
  useTypeImports: true,
  enumsAsTypes: true,
  emitLegacyCommonJSImports: false,
  scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string', SafeInt: 'number' },
};

// Typed documents from the printed schema: for the operations that rest/ and test/ run, and, apart, for
// the dashboard's (dashboard/src/*.graphql), as strings: the page sends their text, and its bundle holds
// each document once, with no GraphQL parser or document AST.
const codegen: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: true,
  generates: {
    'src/generated/graphql/': {
      documents: ['rest/**/*.ts', 'mcp/**/*.ts', 'a2a/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config,
    },
    'src/generated/dashboard/': {
      documents: ['dashboard/src/**/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { ...config, documentMode: 'string' },
    },
  },
};

export default codegen;
