/** What stands in an answer wherever a credential's secret was. */
export const REDACTED = '[REDACTED]';

/** Replaces every secret a text holds; the identity when there are no secrets. */
export type Redact = (text: string) => string;

/** Percent-escapes in lower case (`%2f`): some servers re-encode what they echo. */
const lowerEscapes = (text: string) => text.replace(/%[0-9A-F]{2}/gu, (percent) => percent.toLowerCase());

/**
 * The spellings in which a secret travels and comes back: as it is, percent-encoded (a URL's query, as
 * `encodeURIComponent` and as a form writes it, escapes in either case) and escaped inside a JSON string.
 */
function spellingsOf(secret: string): string[] {
  const component = encodeURIComponent(secret);
  const form = new URLSearchParams({ v: secret }).toString().slice(2);
  const json = JSON.stringify(secret).slice(1, -1);
  return [
    secret,
    component,
    lowerEscapes(component),
    form,
    lowerEscapes(form),
    json,
    json.replaceAll('/', '\\/'),
  ];
}

/**
 * A redactor for the secret values of one credential (api key, bearer or access token, basic password
 * and its base64 `user:pass`, client secret). Longer spellings are replaced first, so a secret that is
 * part of another cannot leave the rest of it behind. Linear in the text for each spelling.
 */
export function redactorOf(secrets: readonly string[]): Redact {
  const spellings = [...new Set(secrets.filter((secret) => secret !== '').flatMap(spellingsOf))].sort(
    (a, b) => b.length - a.length,
  );
  if (spellings.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const spelling of spellings) if (out.includes(spelling)) out = out.split(spelling).join(REDACTED);
    return out;
  };
}

/**
 * Parses a JSON text and redacts every string value and object key in it (so also what JSON escapes
 * spelled otherwise, such as `\u0074ok`), and numbers whose digits hold a secret. Throws as JSON.parse.
 */
export function parseRedactedJson(text: string, redact: Redact): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (typeof value === 'string') return redact(value);
    if (typeof value === 'number') return redact(String(value)) === String(value) ? value : REDACTED;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const entries = Object.entries(value);
    if (entries.every(([key]) => redact(key) === key)) return value;
    // fromEntries defines properties, so a key such as `__proto__` stays a key.
    return Object.fromEntries(entries.map(([key, item]) => [redact(key), item]));
  });
}
