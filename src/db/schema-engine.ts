import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg';

export type SchemaEngine = bindings.SchemaEngine;

let loaded: Promise<void> | undefined;

// @types/node for Node 20 has no WebAssembly declarations; this is the one call used here.
declare const WebAssembly: {
  instantiate(
    bytes: Uint8Array,
    imports: Record<string, object>,
  ): Promise<{ instance: { exports: Record<string, unknown> } }>;
};

// The package imports its .wasm as an ES module, which Node cannot do without a flag; instantiate it by hand
// against the package's own JS glue instead.
function loadWasm(): Promise<void> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const glue = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(new URL('./schema_engine_bg.wasm', `file://${glue}`));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bindings });
    bindings.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return loaded;
}

/** Opens Prisma's schema engine over a driver adapter; `datamodel` is the content of prisma/schema.prisma. */
export async function openSchemaEngine(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  datamodel: string,
  log: (message: string) => void = () => {},
): Promise<SchemaEngine> {
  await loadWasm();
  return bindings.SchemaEngine.new(
    { datamodels: [['schema.prisma', datamodel]] },
    log,
    bindMigrationAwareSqlAdapterFactory(adapterFactory),
  );
}
