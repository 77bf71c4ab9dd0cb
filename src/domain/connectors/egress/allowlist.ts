import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/** The port an allowlist entry without one allows: https's own. */
export const DEFAULT_ALLOWED_PORT = 443;

/**
 * CONNECTOR_EGRESS_ALLOW, parsed: networks in CIDR notation and exact host names (lower case, punycode),
 * each with the one port it allows.
 */
export interface EgressAllowlist {
  networks: { cidr: string; port: number }[];
  hosts: { host: string; port: number }[];
}

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const CIDR = /^(?<network>[\d.:a-f]+\/\d+)(?::(?<port>[^:]*))?$/iu;
const BRACKETED = /^\[(?<address>[^\]]*)\](?::(?<port>.*))?$/u;

/** The port of an entry: 443 when absent, else an integer 1–65535 written in decimal digits. */
function portOf(written: string | undefined): number | null {
  if (written === undefined) return DEFAULT_ALLOWED_PORT;
  const port = /^\d{1,5}$/u.test(written) ? Number(written) : Number.NaN;
  return port >= 1 && port <= 65_535 ? port : null;
}

type Entry = { network: string; port: number } | { host: string; port: number } | { problem: string };

function parseEntry(entry: string): Entry {
  const refused = { problem: `${entry} is not a CIDR, an address or a host name` };
  const badPort = (written: string | undefined) => ({
    problem: `${entry}: ${written ? `${written} is not a port` : 'the port is missing'} (1-65535)`,
  });
  const cidr = CIDR.exec(entry)?.groups;
  if (cidr) {
    const port = portOf(cidr.port);
    if (port === null) return badPort(cidr.port);
    try {
      const [address, bits] = ipaddr.parseCIDR(cidr.network as string);
      return { network: `${address.toString()}/${bits}`, port };
    } catch {
      return { problem: `${entry} is not a valid CIDR` };
    }
  }
  // A bare IPv6 address has no room for a port: `[v6]:port` carries one.
  if (ipaddr.IPv6.isValid(entry)) {
    return { network: `${ipaddr.parse(entry).toString()}/128`, port: DEFAULT_ALLOWED_PORT };
  }
  const bracketed = BRACKETED.exec(entry)?.groups;
  if (bracketed) {
    const address = bracketed.address as string;
    if (!ipaddr.IPv6.isValid(address)) return refused;
    const port = portOf(bracketed.port);
    if (port === null) return badPort(bracketed.port);
    return { network: `${ipaddr.parse(address).toString()}/128`, port };
  }
  // domainToASCII stops at the first URL delimiter ("example.com/24" → "example.com"): refuse those first.
  if (/[\s/\\@?#%[\]]/u.test(entry)) return refused;
  const [name = '', written, ...more] = entry.split(':');
  if (more.length > 0) return refused;
  if (ipaddr.IPv4.isValidFourPartDecimal(name)) {
    const port = portOf(written);
    if (port === null) return badPort(written);
    return { network: `${ipaddr.parse(name).toString()}/32`, port };
  }
  const host = domainToASCII(name.replace(/\.$/u, '').toLowerCase());
  if (host === '' || !HOST_NAME.test(host)) return refused;
  const port = portOf(written);
  if (port === null) return badPort(written);
  return { host, port };
}

/**
 * Parses a comma-separated list of CIDRs (`10.20.0.0/16`, `fd00::/8`), single addresses (`127.0.0.1`,
 * `::1`, taken as /32 or /128) and host names (`billing.corp.example`, matched exactly, ignoring case),
 * each with an optional port: `billing.corp.example:8443`, `10.0.0.5:8443`, `[fd00::5]:8443`,
 * `10.20.0.0/16:8443` (a bare IPv6 address takes none: write it in brackets). An entry without a port
 * allows port 443 only. Returns the problems instead when an entry is none of these.
 */
export function parseEgressAllowlist(raw: string): { allowlist: EgressAllowlist } | { problems: string[] } {
  const allowlist: EgressAllowlist = { networks: [], hosts: [] };
  const problems: string[] = [];
  for (const entry of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const parsed = parseEntry(entry);
    if ('problem' in parsed) problems.push(parsed.problem);
    else if ('network' in parsed) allowlist.networks.push({ cidr: parsed.network, port: parsed.port });
    else allowlist.hosts.push({ host: parsed.host, port: parsed.port });
  }
  return problems.length > 0 ? { problems } : { allowlist };
}

/** The allowlist compiled for lookups at connect time. */
export function compileAllowlist(allowlist: EgressAllowlist) {
  const networks = allowlist.networks.map(({ cidr, port }) => ({ range: ipaddr.parseCIDR(cidr), port }));
  const hosts = new Set(allowlist.hosts.map(({ host, port }) => `${host}:${port}`));
  return {
    allowsHost: (hostname: string, port: number) =>
      hosts.has(`${hostname.toLowerCase().replace(/\.$/u, '')}:${port}`),
    allowsAddress(address: ipaddr.IPv4 | ipaddr.IPv6, port: number): boolean {
      return networks.some(
        ({ range: [network, bits], port: allowed }) =>
          allowed === port && address.kind() === network.kind() && address.match(network, bits),
      );
    },
  };
}
