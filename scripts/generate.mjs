// Generates the Prisma client, the Pothos Prisma types and the typed GraphQL documents.
// `prisma generate` never runs the native schema engine, but it insists that one is present: point it at
// any existing file so it does not try to download one.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};

function run(command, args) {
  const result = spawnSync(command, args, {
    cwd: root,
    env,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run('npx', ['--no-install', 'prisma', 'generate', '--no-hints']);
run('npx', ['--no-install', 'graphql-codegen', '--config', 'codegen.ts', '--silent']);
