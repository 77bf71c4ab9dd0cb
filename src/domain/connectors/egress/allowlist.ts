import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/** CONNECTOR_EGRESS_ALLOW, parsed: networks in CIDR notation and exact host names (lower case, punycode). */
export interface EgressAllowlist {
  networks: string[];
  hosts: string[];
}

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * Parses a comma-separated list of CIDRs (`10.20.0.0/16`, `fd00::/8`), single addresses (`127.0.0.1`, taken
 * as /32 or /128) and host names (`billing.corp.example`, matched exactly, ignoring case). Returns the
 * problems instead when an entry is none of these.
 */
export function parseEgressAllowlist(raw: string): { allowlist: EgressAllowlist } | { problems: string[] } {
  const allowlist: EgressAllowlist = { networks: [], hosts: [] };
  const problems: string[] = [];
  for (const entry of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    if (/^[\d.:a-f]+\/\d+$/iu.test(entry)) {
      try {
        const [address, bits] = ipaddr.parseCIDR(entry);
        allowlist.networks.push(`${address.toString()}/${bits}`);
      } catch {
        problems.push(`${entry} is not a valid CIDR`);
      }
    } else if (ipaddr.isValid(entry) && (entry.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(entry))) {
      const address = ipaddr.parse(entry);
      allowlist.networks.push(`${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`);
    } else {
      // domainToASCII stops at the first URL delimiter ("example.com/24" → "example.com"): refuse those first.
      const host = /[\s/\\:@?#%]/u.test(entry) ? '' : domainToASCII(entry.replace(/\.$/u, '').toLowerCase());
      if (host === '' || !HOST_NAME.test(host))
        problems.push(`${entry} is not a CIDR, an address or a host name`);
      else allowlist.hosts.push(host);
    }
  }
  return problems.length > 0 ? { problems } : { allowlist };
}

/** The allowlist compiled for lookups at connect time. */
export function compileAllowlist(allowlist: EgressAllowlist) {
  const networks = allowlist.networks.map((cidr) => ipaddr.parseCIDR(cidr));
  const hosts = new Set(allowlist.hosts);
  return {
    allowsHost: (hostname: string) => hosts.has(hostname.toLowerCase().replace(/\.$/u, '')),
    allowsAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
      return networks.some(
        ([network, bits]) => address.kind() === network.kind() && address.match(network, bits),
      );
    },
  };
}
