import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('CONNECTOR_EGRESS_ALLOW', () => {
  it('is empty by default: connector calls reach public addresses only', () => {
    expect(loadConfig({}).connectorEgressAllow).toEqual({ networks: [], hosts: [] });
  });

  it('reads CIDRs, single addresses and host names, each allowing port 443 only when it names no port', () => {
    const config = loadConfig({
      CONNECTOR_EGRESS_ALLOW:
        ' 10.20.0.0/16, 127.0.0.1 ,fd00::/8, ::1, Billing.Corp.Example., bücher.example',
    });
    expect(config.connectorEgressAllow).toEqual({
      networks: [
        { cidr: '10.20.0.0/16', port: 443 },
        { cidr: '127.0.0.1/32', port: 443 },
        { cidr: 'fd00::/8', port: 443 },
        { cidr: '::1/128', port: 443 },
      ],
      hosts: [
        { host: 'billing.corp.example', port: 443 },
        { host: 'xn--bcher-kva.example', port: 443 },
      ],
    });
  });

  it('reads a port after a host name, an IPv4 address, a bracketed IPv6 address and a CIDR', () => {
    const config = loadConfig({
      CONNECTOR_EGRESS_ALLOW:
        'billing.corp.example:8443, 127.0.0.1:4443, [::1]:9443, [fd00::5], 10.20.0.0/16:8080, fd00::/8:8443',
    });
    expect(config.connectorEgressAllow).toEqual({
      networks: [
        { cidr: '127.0.0.1/32', port: 4443 },
        { cidr: '::1/128', port: 9443 },
        { cidr: 'fd00::5/128', port: 443 },
        { cidr: '10.20.0.0/16', port: 8080 },
        { cidr: 'fd00::/8', port: 8443 },
      ],
      hosts: [{ host: 'billing.corp.example', port: 8443 }],
    });
  });

  it.each([
    ['10.0.0.0/33', '10.0.0.0/33 is not a valid CIDR'],
    ['example.com/24', 'example.com/24 is not a CIDR, an address or a host name'],
    ['https://example.com', 'https://example.com is not a CIDR, an address or a host name'],
    ['bad host', 'bad host is not a CIDR, an address or a host name'],
    ['example.com:0', 'example.com:0: 0 is not a port (1-65535)'],
    ['example.com:65536', 'example.com:65536: 65536 is not a port (1-65535)'],
    ['example.com:', 'example.com:: the port is missing (1-65535)'],
    ['example.com:https', 'example.com:https: https is not a port (1-65535)'],
    ['127.0.0.1:+80', '127.0.0.1:+80: +80 is not a port (1-65535)'],
    ['[::1]:99999', '[::1]:99999: 99999 is not a port (1-65535)'],
    ['[example.com]:443', '[example.com]:443 is not a CIDR, an address or a host name'],
    ['10.0.0.0/8:x', '10.0.0.0/8:x: x is not a port (1-65535)'],
    ['example.com:443:443', 'example.com:443:443 is not a CIDR, an address or a host name'],
  ])('refuses %j at start-up', (value, problem) => {
    expect(() => loadConfig({ CONNECTOR_EGRESS_ALLOW: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CONNECTOR_EGRESS_ALLOW: value })).toThrow(`CONNECTOR_EGRESS_ALLOW: ${problem}`);
  });
});
