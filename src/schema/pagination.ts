import { z } from 'zod';
import { builder } from '../builder.js';

/** Arguments every list takes: `first` (1–100, default 20) and an opaque `after` cursor. */
export const pageArgsSchema = {
  first: z
    .int()
    .min(1)
    .max(100)
    .nullish()
    .transform((value) => value ?? 20),
  after: z
    .string()
    .nullish()
    .refine((value) => value == null || decodeCursor(value) !== null, {
      message: 'after is not a valid cursor',
    }),
};

export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(row: Cursor): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The row a cursor points after, or null for anything `encodeCursor` did not make: a cursor is opaque, so
 * its id must be a uuid and its time a real instant within the years 0000–9999 that the database stores,
 * and it must decode to exactly what was encoded.
 */
export function decodeCursor(cursor: string): Cursor | null {
  const [time, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (rest.length > 0 || !time || !id || !CURSOR_TIME.test(time) || !UUID.test(id)) return null;
  const createdAt = new Date(time);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== time) return null;
  const decoded = { createdAt, id };
  return encodeCursor(decoded) === cursor ? decoded : null;
}

/** Prisma `where` for rows after the cursor in (createdAt desc, id desc) order. */
export function afterCursor(after: string | null | undefined) {
  const cursor = after ? decodeCursor(after) : null;
  if (!cursor) return {};
  return {
    OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }],
  };
}

export const newestFirst = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** Cuts a page from rows fetched with `take: first + 1`. */
export function toPage<Row extends Cursor>(
  rows: Row[],
  first: number,
): { nodes: Row[]; nextCursor: string | null } {
  const nodes = rows.slice(0, first);
  const last = nodes.at(-1);
  return { nodes, nextCursor: rows.length > first && last ? encodeCursor(last) : null };
}

/**
 * A `<Name>Page { nodes, nextCursor }` type for a list of `type`. `Extra` is what its resolver also hands the
 * page's own fields (a list's filter, for a count of it).
 */
export function pageType<Shape, Extra extends object = object>(
  name: string,
  type: Parameters<typeof builder.objectRef<Shape>>[0] | object,
) {
  return builder.objectRef<{ nodes: Shape[]; nextCursor: string | null } & Extra>(`${name}Page`).implement({
    fields: (t) => ({
      nodes: t.field({ type: [type as never], resolve: (page) => page.nodes as never }),
      nextCursor: t.string({
        nullable: true,
        description: 'Pass as `after` for the next page; null on the last page.',
        resolve: (page) => page.nextCursor,
      }),
    }),
  });
}
