import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';
import { applyMigrations, pendingMigrations } from './migrate.js';

export type { PrismaClient };
export type DatabaseKind = 'pglite' | 'postgresql';

export interface Database {
  kind: DatabaseKind;
  prisma: PrismaClient;
  /** Applies pending migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /** True when the database answers and no migration is pending. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent the embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files; `memory://` keeps nothing. */
  dataDir: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const adapter = new PrismaPg({ connectionString: options.databaseUrl, max: 10 });
    return wrap('postgresql', adapter, async () => {});
  }
  const dataDir = options.dataDir === 'memory://' ? 'memory://' : path.join(options.dataDir, 'pglite');
  if (dataDir !== 'memory://') await mkdir(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir);
  return wrap('pglite', new PrismaPGlite(pglite), () => pglite.close());
}

function wrap(
  kind: DatabaseKind,
  adapter: SqlMigrationAwareDriverAdapterFactory,
  closeDriver: () => Promise<void>,
): Database {
  const prisma = new PrismaClient({ adapter });
  return {
    kind,
    prisma,
    async migrate() {
      // The schema engine is large; only load it when something is pending.
      const pending = await pendingMigrations((sql) => prisma.$queryRawUnsafe(sql));
      return pending.length === 0 ? [] : applyMigrations(adapter);
    },
    async ready() {
      try {
        const pending = await pendingMigrations((sql) => prisma.$queryRawUnsafe(sql));
        return pending.length === 0;
      } catch {
        return false;
      }
    },
    async close() {
      await prisma.$disconnect();
      await closeDriver();
    },
  };
}
