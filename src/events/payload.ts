import { Prisma } from '../generated/prisma/client.js';

/**
 * One field of an event payload, declared once: its value from the TypeScript object the event is about
 * (`ts`) and the SQL expression that yields the same JSON value from that object's row (`sql`), for the
 * statements that write a change and its event at once.
 */
export interface PayloadField<Source, SqlSource> {
  ts(source: Source): unknown;
  sql(source: SqlSource): Prisma.Sql | string;
}

type Fields<Source, SqlSource> = Record<string, PayloadField<Source, SqlSource>>;

/** The payload the fields build: each key with what its `ts` returns, in declaration order. */
type Built<F> = { [K in keyof F]: F[K] extends { ts(source: never): infer Value } ? Value : never };

export interface EventPayload<Source, SqlSource, F extends Fields<Source, SqlSource>> {
  /** The keys, in the order the TypeScript form writes them. */
  keys: readonly string[];
  /** The payload built in TypeScript. */
  of(source: Source): Built<F>;
  /** The same payload built in SQL: `jsonb_build_object('key', expression, …)`. */
  sql(source: SqlSource): Prisma.Sql;
}

/** The TypeScript form of a payload declared with eventPayload. */
export type PayloadOf<P extends { of(source: never): unknown }> = ReturnType<P['of']>;

/**
 * Declares an event payload once, from which both of its forms come: `of` (TypeScript, for enqueueEvent)
 * and `sql` (a `jsonb_build_object`, for an outbox row written in SQL). A field added here is in both.
 * `SqlSource` is what the SQL expressions are written over: by default the alias of the row they read.
 */
export function eventPayload<Source, SqlSource = string>() {
  return <F extends Fields<Source, SqlSource>>(fields: F): EventPayload<Source, SqlSource, F> => {
    const entries = Object.entries(fields);
    for (const [key] of entries)
      if (!/^[a-z][a-z0-9_]*$/.test(key)) throw new Error(`Bad payload key ${key}`);
    return {
      keys: entries.map(([key]) => key),
      of(source) {
        const payload: Record<string, unknown> = {};
        for (const [key, field] of entries) payload[key] = field.ts(source);
        return payload as Built<F>;
      },
      sql(source) {
        const pairs = entries.map(([key, field]) => {
          const expression = field.sql(source);
          return Prisma.sql`${Prisma.raw(`'${key}'`)}, ${typeof expression === 'string' ? Prisma.raw(expression) : expression}`;
        });
        return Prisma.sql`jsonb_build_object(${Prisma.join(pairs, ', ')})`;
      },
    };
  };
}

/** SQL for an ISO 8601 timestamp in UTC with milliseconds, as Date#toISOString writes it. */
export const isoSql = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** SQL for a decimal as text, as Decimal#toFixed() writes it: no trailing zeros. */
export const decimalSql = (column: string) => `trim_scale(${column})::text`;
