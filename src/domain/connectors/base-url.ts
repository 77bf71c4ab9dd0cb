import ipaddr from 'ipaddr.js';
import { findMixedScriptLabel } from './host-scripts.js';
import { describeNonPublicAddress } from './ip-literal.js';

export const BASE_URL_MAX_LENGTH = 2048;

const METADATA_HOSTNAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.azure.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
  'metadata.packet.net',
]);

// Domains that never resolve publicly but commonly resolve inside a network (RFC 6761, RFC 6762, RFC 8375,
// the ICANN-reserved .internal, and names ICANN will not delegate because of private use).
const NON_PUBLIC_SUFFIXES: readonly string[] = [
  'local',
  'internal',
  'localdomain',
  'home.arpa',
  'lan',
  'intranet',
  'corp',
  'home',
  'test',
  'invalid',
];

// Anything the URL parser silently strips or drops (surrounding spaces, tabs and newlines inside) is refused
// so that the stored text and the URL that is eventually requested cannot differ.
const WHITESPACE_OR_CONTROL = /[\s\p{Cc}]/u;

function hasSuffix(host: string, suffix: string): boolean {
  return host === suffix || host.endsWith(`.${suffix}`);
}

function describeHostName(host: string): string | null {
  if (METADATA_HOSTNAMES.has(host)) return 'is a cloud metadata endpoint';
  if (hasSuffix(host, 'localhost')) return 'is a loopback host name';
  const suffix = NON_PUBLIC_SUFFIXES.find((candidate) => hasSuffix(host, candidate));
  if (suffix !== undefined) return `is in the non-public .${suffix} domain`;
  if (!host.includes('.')) return 'is not a fully qualified domain name';
  if (host.split('.').includes('')) return 'is not a valid domain name';
  const mixed = findMixedScriptLabel(host);
  if (mixed) return `has a label mixing scripts (${mixed.scripts.join(' and ')}): ${mixed.label}`;
  return null;
}

function describeHost(hostname: string): string | null {
  if (hostname.startsWith('[')) return describeNonPublicAddress(ipaddr.IPv6.parse(hostname.slice(1, -1)));

  // The URL parser keeps one or more trailing dots on names, and on dotted quads followed by several dots
  // ("127.0.0.1..") it skips IPv4 parsing entirely; resolvers ignore trailing dots, so this check does too.
  const trimmed = hostname.replace(/\.+$/u, '');
  if (trimmed === '') return 'is not a valid host';
  if (trimmed !== hostname) {
    let reparsed: string;
    try {
      reparsed = new URL(`https://${trimmed}/`).hostname;
    } catch {
      return 'is not a valid host';
    }
    if (reparsed !== trimmed) return describeHost(reparsed);
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(trimmed)) {
    return describeNonPublicAddress(ipaddr.IPv4.parse(trimmed));
  }
  return describeHostName(trimmed);
}

/**
 * Checks a connector `base_url` (or another outbound URL, such as a webhook's, named `field` in the
 * reasons) and returns the reason for the first problem, or null when it is acceptable.
 *
 * - It must be an absolute URL written with `https://`, at most 2048 characters, without whitespace or
 *   control characters, and without user info (`user:password@`, including an empty `@`).
 * - It must not carry a query string or a fragment (not even an empty `?` or `#`): endpoint paths are
 *   appended to the base URL, so a query there would end up in the middle of the request URL, and a fragment
 *   is never sent to the server. Fixed query parameters belong in the endpoint path.
 * - Port 0 is refused; any other port is allowed.
 * - The host must not be a literal IP address that is not public (loopback, private, link-local, CGNAT,
 *   multicast, unspecified, broadcast, reserved, documentation, unique-local, site-local, ...), including IPv6
 *   forms that embed such an IPv4 address (IPv4-mapped, IPv4-translated, NAT64 64:ff9b::/96, 6to4,
 *   IPv4-compatible). IPv4-compatible addresses (::a.b.c.d) are refused even when they embed a public
 *   address because they are deprecated; the other embedding forms are accepted when the embedded address is
 *   public.
 * - It must not contain a backslash anywhere (`https://evil.com\@127.0.0.1` reads as two different hosts to
 *   different parsers).
 * - No label of the host may mix scripts (`аpple.com` with a Cyrillic а), except the combinations of Han
 *   with Hiragana, Katakana, Bopomofo or Hangul, and Latin with those (Unicode TS #39, highly restrictive).
 * - The host must not be `localhost`, a name under `.localhost` or another non-public domain (`.local`,
 *   `.internal`, `.home.arpa`, ...), a known cloud metadata name, or a single-label name (which would be
 *   completed with the server's DNS search domains).
 *
 * Hosts are compared after the WHATWG URL parser has normalised them (lower case, IDNA mapping, IPv4 in
 * decimal, octal, hex or shortened spellings) and with trailing dots removed. No DNS lookup is made, so a
 * public name that resolves to a private address passes here; the outbound request must check the address
 * it connects to.
 */
export function checkBaseUrl(raw: string, field = 'base_url'): string | null {
  if (raw.length === 0) return `${field} must not be empty`;
  if (raw.length > BASE_URL_MAX_LENGTH) return `${field} must be at most ${BASE_URL_MAX_LENGTH} characters`;
  if (WHITESPACE_OR_CONTROL.test(raw)) return `${field} must not contain whitespace or control characters`;
  // The URL parser reads a backslash as a slash in https URLs, other parsers do not: the host is ambiguous.
  if (raw.includes('\\')) return `${field} must not contain a backslash`;

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${field} must be an absolute URL`;
  }
  if (url.protocol !== 'https:') return `${field} must use https`;
  if (!/^https:\/\//iu.test(raw)) return `${field} must start with https://`;

  const authority = /^https:\/\/([^/\\?#]*)/iu.exec(raw)?.[1] ?? '';
  if (authority === '') return `${field} must include a host`;
  if (authority.includes('@') || url.username !== '' || url.password !== '') {
    return `${field} must not contain user info (username or password)`;
  }
  if (raw.includes('#')) return `${field} must not contain a fragment`;
  if (raw.includes('?')) return `${field} must not contain a query string`;
  if (url.port === '0') return `${field} port must be between 1 and 65535`;

  const reason = describeHost(url.hostname);
  return reason === null ? null : `${field} host ${url.hostname} ${reason}`;
}

/**
 * The form of an accepted `base_url` that is stored and requested: the host as the URL parser normalises it
 * (lower case, IDNA to punycode, IPv4 in dotted decimal, IPv6 compressed, default port 443 dropped), the rest
 * as written.
 */
export function normalizeBaseUrl(raw: string): string {
  const url = new URL(raw);
  const authority = /^https:\/\/[^/]*/iu.exec(raw)?.[0] ?? '';
  return `https://${url.host}${raw.slice(authority.length)}`;
}

/**
 * The origin of an accepted `base_url` (or `token_url`) as the URL standard serialises it: scheme, host and
 * port, with the host normalised and the scheme's default port dropped, so `https://API.example.com:443/v1`
 * and `https://api.example.com/v2` share the origin `https://api.example.com`. A trailing dot names another
 * origin (`https://api.example.com.`), as it does for browsers: it is another Host and TLS server name.
 * A stored credential is sent to this origin only.
 */
export function originOf(url: string): string {
  return new URL(url).origin;
}
