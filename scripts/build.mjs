// npm run build: generates the Prisma client and the typed GraphQL documents, then bundles the server,
// the operator commands (token, migrate), the reference agent runtime (agent), the demo (demo) and the dashboard into dist/
// with esbuild. See docs/decisions/0010-build-and-start-up.md ("Build") for why a bundle and not tsc output.
import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildDashboard } from './build-dashboard.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

const generate = spawnSync(process.execPath, ['scripts/generate.mjs'], { cwd: root, stdio: 'inherit' });
if (generate.status !== 0) process.exit(generate.status ?? 1);

await rm(new URL('../dist', import.meta.url), { recursive: true, force: true });
await mkdir(new URL('../dist', import.meta.url));

// Prisma ships its query compiler's WASM as a 4.4 MB base64 string in a JS module, which V8 would keep
// twice (the module's source and the string) for the life of the process. The build writes the bytes to
// dist/ instead and gives the client a module that reads them: the generated client passes `wasm` to
// Buffer.from(…, 'base64'), which copies a Buffer as it is.
const queryCompilerWasm = '@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs';
const { wasm: queryCompilerBase64 } = await import(queryCompilerWasm);
await writeFile(
  new URL('../dist/query-compiler.wasm', import.meta.url),
  Buffer.from(queryCompilerBase64, 'base64'),
);
const queryCompilerFromFile = {
  name: 'query-compiler-from-file',
  setup(build) {
    build.onResolve(
      { filter: /^@prisma\/client\/runtime\/query_compiler_fast_bg\.postgresql\.wasm-base64\.mjs$/ },
      () => ({
        path: 'query-compiler-wasm',
        namespace: 'query-compiler-from-file',
      }),
    );
    build.onLoad({ filter: /.*/, namespace: 'query-compiler-from-file' }, () => ({
      contents:
        "import { readFileSync } from 'node:fs';\n" +
        "export const wasm = readFileSync(new URL('./query-compiler.wasm', import.meta.url));\n",
      loader: 'js',
    }));
  },
};

// graphql ships each module twice, CommonJS (`main`) and ES (`.mjs` beside it, `module`), with no `exports`
// map, so the bundler takes the CommonJS files for the node platform; every ES importer then reads graphql's
// functions through getters on an interop object, a call each time the executor touches `isListType` or
// `getNamedType` (a twentieth of the gateway's main thread in a CPU profile, most of a 1,000-step
// timeline's execution). Every import and require of graphql resolves to its ES files instead: one copy,
// direct bindings.
const graphqlAsModules = {
  name: 'graphql-as-modules',
  setup(build) {
    build.onResolve({ filter: /^graphql(\/.*)?$/ }, async (args) => {
      if (args.pluginData?.graphqlAsModules) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: { graphqlAsModules: true },
      });
      if (resolved.errors.length > 0 || !resolved.path.endsWith('.js')) return resolved;
      return { ...resolved, path: resolved.path.replace(/\.js$/, '.mjs') };
    });
  },
};

await build({
  absWorkingDir: root,
  entryPoints: {
    main: 'src/main.ts',
    // PGlite's thread, started by src/db/pglite-remote.ts from the file next to it.
    'pglite-worker': 'src/db/pglite-worker.ts',
    token: 'scripts/token.ts',
    agent: 'agent/main.ts',
    // npm run demo: the gateway, the reference runtime and a scripted model in one process (docs/demo.md).
    demo: 'src/demo/main.ts',
    migrate: 'scripts/migrate.ts',
    'reseal-credentials': 'scripts/reseal-credentials.ts',
  },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
  plugins: [queryCompilerFromFile, graphqlAsModules],
  // Left as imports from node_modules: packages that read files next to their own code at run time (the
  // PGlite and schema-engine WASM, Prisma's query compiler), load native or worker code (pg, pino), or are
  // loaded only when configured (ioredis).
  external: [
    '@electric-sql/pglite',
    '@prisma/client',
    '@prisma/schema-engine-wasm',
    'ioredis',
    'pg',
    'pglite-prisma-adapter',
    'pino',
  ],
  // Bundled CommonJS dependencies call require(); give them one in the ES module output.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
await buildDashboard();
console.log(
  'built dist/main.js, dist/pglite-worker.js, dist/token.js, dist/agent.js, dist/demo.js, dist/migrate.js, dist/reseal-credentials.js, dist/dashboard/',
);
