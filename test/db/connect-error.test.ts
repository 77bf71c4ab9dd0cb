import { describe, expect, it } from 'vitest';
import { databaseUrlErrorOf } from '../../src/db/connect-error.js';

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('the one-line explanation of a DATABASE_URL start-up cannot use', () => {
  it('quotes a database name that needs it, for the shell and for SQL', () => {
    const error = databaseUrlErrorOf(
      'postgres://app%20user:secret@db.example:6543/my%20%22data%22',
      pgError('3D000', 'database "my "data"" does not exist'),
    );
    expect(error?.message).toBe(
      'DATABASE_URL names database "my ""data""", which does not exist on the PostgreSQL server at db.example:6543; ' +
        `create it (createdb -h db.example -p 6543 -U 'app user' 'my "data"', or CREATE DATABASE "my ""data"""; in psql) or correct DATABASE_URL.`,
    );
  });

  it('never repeats the password of DATABASE_URL', () => {
    const url = 'postgres://app:hunter2-secret@127.0.0.1:5432/app';
    const messages = [
      pgError('3D000', 'database "app" does not exist'),
      pgError('28P01', 'password authentication failed for user "app"'),
      pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      new Error('timeout exceeded when trying to connect'),
    ].map((error) => databaseUrlErrorOf(url, error)?.message ?? '');
    expect(messages.every((message) => message !== '' && !message.includes('hunter2'))).toBe(true);
  });

  it('names the connect timeout when the server does not answer in time', () => {
    expect(
      databaseUrlErrorOf('postgres://app@10.0.0.9/app', new Error('timeout exceeded when trying to connect'))
        ?.message,
    ).toBe(
      'DATABASE_URL: the PostgreSQL server at 10.0.0.9:5432 did not accept a connection within DATABASE_CONNECT_TIMEOUT_MS.',
    );
  });

  it('leaves other errors alone', () => {
    expect(
      databaseUrlErrorOf('postgres://app@127.0.0.1/app', pgError('42P01', 'relation does not exist')),
    ).toBe(undefined);
  });
});
