// The path of a connector request, built once and read as servers read it. The request builder sends the
// URL `endpointUrl` makes, and an approval policy matches that URL's path in every reading
// `pathReadings` lists, so whatever a template spells, what is matched is what goes out.

const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/gu;
const UNRESERVED = /^[A-Za-z0-9._~-]$/u;

/**
 * Percent-encoding normalised (RFC 3986, 6.2.2.1 and 6.2.2.2): an escape of an unreserved character
 * (letters, digits, `-`, `.`, `_`, `~`) is decoded, any other escape is kept with its hex digits in upper
 * case: the same URL under RFC 3986, in one pass over the text. Run after the URL parser has removed dot
 * segments (it reads `%2e` as a dot too), so a decoded `.` never forms one.
 */
function normalizePercentEncoding(text: string): string {
  return text.replace(PERCENT_ESCAPE, (triple, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : triple.toUpperCase();
  });
}

/**
 * The URL a call of the endpoint `endpointPath` of a connector at `baseUrl` goes to: base_url's path and
 * the endpoint's joined (one slash between them, whether or not base_url ends with one), parsed by the
 * WHATWG URL parser (dot segments removed, `%2e` spellings included; what must be escaped escaped), then
 * its path's percent-encoding normalised. The endpoint's own query string is kept.
 */
export function endpointUrl(baseUrl: string, endpointPath: string): URL {
  const url = new URL(`${baseUrl.replace(/\/$/u, '')}${endpointPath}`);
  url.pathname = normalizePercentEncoding(url.pathname);
  return url;
}

// Any origin: only the path of these URLs is read.
const READER = 'https://path.invalid';

/** A path (or path pattern) as `endpointUrl` normalises one, in lower case. */
export function normalizedPath(path: string): string {
  return normalizePercentEncoding(new URL(`${READER}${path}`).pathname).toLowerCase();
}

/** The path with dot segments resolved by the URL parser. */
const resolveDots = (path: string) => new URL(`${READER}${path}`).pathname;

/** Escapes of `%` decoded and the result normalised again, until nothing changes (`%2570` → `%70` → `p`). */
function decodedRepeatedly(path: string): string {
  let current = path;
  for (;;) {
    const next = normalizePercentEncoding(current.replace(/%25/gu, '%')).toLowerCase();
    if (next === current) return current;
    current = next;
  }
}

const unique = (values: string[]) => [...new Set(values)];

/**
 * The segments of `path` (a path `endpointUrl` made, or its normalised spelling) in each way a server may
 * read it, in lower case (some servers ignore case). Servers differ in whether they decode an escape more
 * than once, read an encoded slash or backslash (`%2F`, `%5C`) as a separator, drop matrix parameters
 * (`;v=2`) from segments, and merge repeated slashes (before or after resolving the dot segments those
 * readings can make) or ignore a trailing one; every combination is a reading. Most paths have a single
 * reading, and none has more than 24.
 */
export function pathReadings(path: string): string[][] {
  const readings = new Map<string, string[]>();
  const add = (resolved: string, dropEmpty: boolean) => {
    const segments = resolved.split('/').slice(1);
    const kept = dropEmpty ? segments.filter((segment) => segment !== '') : segments;
    readings.set(JSON.stringify(kept), kept);
  };
  const lower = path.toLowerCase();
  for (const decoded of unique([lower, decodedRepeatedly(lower)])) {
    for (const separated of unique([decoded, decoded.replace(/%2f|%5c/gu, '/')])) {
      const bare = separated
        .split('/')
        .map((segment) => segment.split(';', 1)[0] ?? '')
        .join('/');
      for (const reading of unique([separated, bare])) {
        add(resolveDots(reading), false);
        add(resolveDots(reading), true);
        add(resolveDots(reading.replace(/\/{2,}/gu, '/')), true);
      }
    }
  }
  return [...readings.values()];
}
