/** DATABASE_URL cannot be used: start-up prints this one line (what is wrong and what to do) and exits 1. */
export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

/** Where DATABASE_URL points, as pg reads it; never its password. */
interface Target {
  host: string;
  port: string;
  user: string | undefined;
  database: string | undefined;
}

function targetOf(databaseUrl: string): Target {
  const url = new URL(databaseUrl);
  const decode = (text: string) => (text === '' ? undefined : decodeURIComponent(text));
  return {
    host: url.searchParams.get('host') ?? decode(url.hostname) ?? 'localhost',
    port: url.port || '5432',
    user: decode(url.username),
    database: decode(url.pathname.slice(1)),
  };
}

/** A word for a shell command line: quoted only when it needs it. */
const shellWord = (text: string) => (/^[\w.:/@-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

const sqlIdentifier = (text: string) => `"${text.replaceAll('"', '""')}"`;

// PostgreSQL's codes for refusals while connecting (classes 28 and 53, and a server starting or stopping).
const refusals = new Set(['28000', '28P01', '53300', '57P01', '57P02', '57P03']);

const unreachable: Record<string, string> = {
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
};

/**
 * The one-line explanation of a failure to connect to the PostgreSQL server DATABASE_URL names (a
 * database or user it does not have, nothing listening, a host name that does not resolve, no answer in
 * time), or undefined when `error` is not one.
 */
export function databaseUrlErrorOf(databaseUrl: string, error: unknown): DatabaseUrlError | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  let target: Target;
  try {
    target = targetOf(databaseUrl);
  } catch {
    return undefined;
  }
  const at = `${target.host}:${target.port}`;
  if (code === '3D000') {
    const name = target.database ?? target.user ?? '';
    const createdb = [
      'createdb',
      `-h ${shellWord(target.host)}`,
      `-p ${target.port}`,
      ...(target.user ? [`-U ${shellWord(target.user)}`] : []),
      shellWord(name),
    ].join(' ');
    return new DatabaseUrlError(
      `DATABASE_URL names database ${sqlIdentifier(name)}, which does not exist on the PostgreSQL server at ${at}; ` +
        `create it (${createdb}, or CREATE DATABASE ${sqlIdentifier(name)}; in psql) or correct DATABASE_URL.`,
    );
  }
  if (typeof code === 'string' && refusals.has(code)) {
    return new DatabaseUrlError(
      `DATABASE_URL: the PostgreSQL server at ${at} refused the connection: ${text}`,
    );
  }
  if (code === 'ECONNREFUSED') {
    return new DatabaseUrlError(
      `DATABASE_URL: no PostgreSQL server accepts connections at ${at} (connection refused); ` +
        'start it or correct DATABASE_URL.',
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new DatabaseUrlError(
      `DATABASE_URL: the host name ${target.host} does not resolve (${code}); correct DATABASE_URL.`,
    );
  }
  if (typeof code === 'string' && unreachable[code]) {
    return new DatabaseUrlError(
      `DATABASE_URL: cannot reach PostgreSQL at ${at}: ${unreachable[code]} (${code}).`,
    );
  }
  // pg-pool's and pg's own words for a connection that did not come up within connectionTimeoutMillis.
  if (/timeout exceeded when trying to connect|connection timeout/i.test(text)) {
    return new DatabaseUrlError(
      `DATABASE_URL: the PostgreSQL server at ${at} did not accept a connection within DATABASE_CONNECT_TIMEOUT_MS.`,
    );
  }
  return undefined;
}
