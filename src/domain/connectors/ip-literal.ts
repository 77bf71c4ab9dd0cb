import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

const IPV4_RANGE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (shared, 100.64.0.0/10) address',
  private: 'a private address',
  reserved: 'a reserved or documentation address',
  as112: 'a reserved (AS112) address',
  amt: 'a reserved (AMT) address',
};

const IPV6_RANGE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  linkLocal: 'a link-local address',
  multicast: 'a multicast address',
  loopback: 'a loopback address',
  uniqueLocal: 'a unique-local (private) address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a reserved (discard) address',
  teredo: 'a Teredo tunnelling address',
  benchmarking: 'a reserved (benchmarking) address',
  amt: 'a reserved (AMT) address',
  as112v6: 'a reserved (AS112) address',
  deprecatedOrchid: 'a reserved (ORCHID) address',
  orchid2: 'a reserved (ORCHID) address',
  droneRemoteIdProtocolEntityTags: 'a reserved (DRIP) address',
  segmentRouting: 'a reserved (segment routing) address',
  reserved: 'a reserved or documentation address',
};

// Addresses that hand out credentials to whoever can reach them; named explicitly so the message is precise,
// although each also falls in a non-public range.
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  '100.100.100.200',
  'fd00:ec2::254',
  'fd00:ec2::23',
]);

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function ipv4FromWords(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function describeIPv4(address: IPv4): string | null {
  if (METADATA_ADDRESSES.has(address.toString())) return 'a cloud metadata endpoint';
  const range = address.range();
  if (range === 'unicast') return null;
  return IPV4_RANGE_DESCRIPTIONS[range] ?? `a non-public (${range}) address`;
}

function describeEmbedded(embedded: IPv4): string | null {
  const reason = describeIPv4(embedded);
  return reason === null ? null : `embeds ${embedded.toString()}, which is ${reason}`;
}

function is(reason: string | null): string | null {
  return reason === null ? null : `is ${reason}`;
}

function describeIPv6(address: IPv6): string | null {
  if (METADATA_ADDRESSES.has(address.toString())) return 'is a cloud metadata endpoint';
  const range: string = address.range();
  const parts = address.parts;
  const word = (index: number): number => parts[index] ?? 0;

  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return describeEmbedded(ipv4FromWords(word(6), word(7)));
    case 'rfc6052':
      // Only the well-known /96 prefix embeds the IPv4 address at a fixed place; 64:ff9b:1::/48 is local-use.
      if (address.match(NAT64_WELL_KNOWN)) return describeEmbedded(ipv4FromWords(word(6), word(7)));
      return 'is a local-use NAT64 address';
    case '6to4':
      return describeEmbedded(ipv4FromWords(word(1), word(2)));
    case 'unicast':
      break;
    default:
      return is(IPV6_RANGE_DESCRIPTIONS[range] ?? `a non-public (${range}) address`);
  }

  if (address.match(IPV4_COMPATIBLE)) {
    return describeEmbedded(ipv4FromWords(word(6), word(7))) ?? 'is a deprecated IPv4-compatible address';
  }
  // ipaddr.js labels everything it has no special range for as unicast, including unallocated space.
  if (!address.match(GLOBAL_UNICAST)) return 'is not a global unicast address';
  return null;
}

/**
 * Explains why an IP literal is not a public, globally routable address, or returns null when it is.
 * The reason completes a sentence whose subject is the address: "is a loopback address",
 * "embeds 10.0.0.1, which is a private address".
 */
export function describeNonPublicAddress(address: IPv4 | IPv6): string | null {
  return address instanceof ipaddr.IPv4 ? is(describeIPv4(address)) : describeIPv6(address);
}

/** Whether an address is one of the cloud metadata endpoints, which no configuration makes reachable. */
export function isCloudMetadataAddress(address: IPv4 | IPv6): boolean {
  return METADATA_ADDRESSES.has(address.toString());
}
