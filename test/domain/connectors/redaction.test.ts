import { describe, expect, it } from 'vitest';
import { parseRedactedJson, REDACTED, redactorOf } from '../../../src/domain/connectors/redaction.js';

describe('redactorOf', () => {
  const redact = redactorOf(['s3cr/t+key=', 'tok']);

  it.each([
    ['as it is', 'auth=s3cr/t+key= end', `auth=${REDACTED} end`],
    ['percent-encoded', '/v1/items?api_key=s3cr%2Ft%2Bkey%3D', `/v1/items?api_key=${REDACTED}`],
    ['percent-encoded in lower case', '?k=s3cr%2ft%2bkey%3d', `?k=${REDACTED}`],
    ['escaped in a JSON text', '{"a":"s3cr\\/t+key="}', `{"a":"${REDACTED}"}`],
    ['twice', 'tok tok', `${REDACTED} ${REDACTED}`],
  ])('replaces a secret written %s', (_how, text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it('replaces the longer secret first, so a shorter one inside it leaves nothing behind', () => {
    expect(redactorOf(['abc', 'abcdef'])('xabcdefx')).toBe(`x${REDACTED}x`);
  });

  it('leaves text alone without secrets, and ignores an empty one', () => {
    expect(redactorOf([])('anything')).toBe('anything');
    expect(redactorOf([''])('anything')).toBe('anything');
  });
});

describe('parseRedactedJson', () => {
  const redact = redactorOf(['tok_123', '987654321']);

  it('redacts strings, keys (also __proto__ stays a key) and numbers that hold a secret', () => {
    const parsed = parseRedactedJson(
      '{"a":"Bearer \\u0074ok_123","tok_123":1,"n":987654321,"list":[{"__proto__":"tok_123"}],"ok":2}',
      redact,
    ) as Record<string, unknown>;
    expect(parsed).toEqual({
      a: `Bearer ${REDACTED}`,
      [REDACTED]: 1,
      n: REDACTED,
      list: [JSON.parse(`{"__proto__":"${REDACTED}"}`)],
      ok: 2,
    });
    expect(Object.getPrototypeOf((parsed.list as object[])[0])).toBe(Object.prototype);
  });

  it('throws on a text that is not JSON, as JSON.parse does', () => {
    expect(() => parseRedactedJson('not json', redact)).toThrow(SyntaxError);
  });
});
