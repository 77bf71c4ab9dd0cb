import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for the GraphQL operations that rest/ and test/ run, from the printed schema.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['rest/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
  ignoreNoDocuments: true,
  generates: {
    'src/generated/graphql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        emitLegacyCommonJSImports: false,
        scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string', SafeInt: 'number' },
      },
    },
  },
};

export default config;
