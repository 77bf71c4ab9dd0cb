import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('CONNECTOR_EGRESS_ALLOW', () => {
  it('is empty by default: connector calls reach public addresses only', () => {
    expect(loadConfig({}).connectorEgressAllow).toEqual({ networks: [], hosts: [] });
  });

  it('reads CIDRs, single addresses and host names', () => {
    const config = loadConfig({
      CONNECTOR_EGRESS_ALLOW:
        ' 10.20.0.0/16, 127.0.0.1 ,fd00::/8, ::1, Billing.Corp.Example., bücher.example',
    });
    expect(config.connectorEgressAllow).toEqual({
      networks: ['10.20.0.0/16', '127.0.0.1/32', 'fd00::/8', '::1/128'],
      hosts: ['billing.corp.example', 'xn--bcher-kva.example'],
    });
  });

  it.each([
    ['10.0.0.0/33', '10.0.0.0/33 is not a valid CIDR'],
    ['example.com/24', 'example.com/24 is not a CIDR, an address or a host name'],
    ['https://example.com', 'https://example.com is not a CIDR, an address or a host name'],
    ['bad host', 'bad host is not a CIDR, an address or a host name'],
  ])('refuses %j at start-up', (value, problem) => {
    expect(() => loadConfig({ CONNECTOR_EGRESS_ALLOW: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CONNECTOR_EGRESS_ALLOW: value })).toThrow(`CONNECTOR_EGRESS_ALLOW: ${problem}`);
  });
});
