import { describe, expect, it } from 'vitest';
import {
  BASE_URL_MAX_LENGTH,
  checkBaseUrl,
  normalizeBaseUrl,
} from '../../../src/domain/connectors/base-url.js';
import { findMixedScriptLabel } from '../../../src/domain/connectors/host-scripts.js';

const LOOPBACK = /loopback/;
const PRIVATE = /private/;
const LINK_LOCAL = /link-local/;
const UNSPECIFIED = /unspecified/;
const METADATA = /metadata/;
const RESERVED = /reserved|documentation/;

describe('URL parser normalisation relied upon by checkBaseUrl', () => {
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1', '127.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://4294967295/', '255.255.255.255'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://LOCALHOST/', 'localhost'],
    ['https://ｌｏｃａｌｈｏｓｔ/', 'localhost'],
    ['https://①②⑦.0.0.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('parses %s to host %s', (raw, hostname) => {
    expect(new URL(raw).hostname).toBe(hostname);
  });

  it.each([
    ['https://localhost./', 'localhost.'],
    ['https://127.0.0.1../', '127.0.0.1..'],
    ['https://0x7f.0.0.1../', '0x7f.0.0.1..'],
  ])('leaves the trailing dots of %s in place', (raw, hostname) => {
    expect(new URL(raw).hostname).toBe(hostname);
  });
});

describe('checkBaseUrl', () => {
  it.each([
    'https://api.example.com/v1',
    'https://api.example.com',
    'https://api.example.com/',
    'https://API.Example.COM/v1/',
    'https://api.example.com:8443/v1',
    'https://api.example.com:443',
    'https://example.com.',
    'https://8.8.8.8/',
    'https://1.1.1.1:8443/api',
    'https://[2606:4700:4700::1111]/',
    'https://[2001:4860:4860::8888]:8443/v2',
    'https://bücher.example/api',
    'https://xn--bcher-kva.example/api',
    'https://例え.テスト.jp/',
    'https://localhost.example.com/',
    'https://internal.example.com/',
    'https://metadata.example.com/',
    'https://100.128.0.1/',
    'https://172.32.0.1/',
    'https://[::ffff:8.8.8.8]/',
    'https://[64:ff9b::8.8.8.8]/',
    'https://[2002:808:808::1]/',
  ])('accepts %s', (raw) => {
    expect(checkBaseUrl(raw)).toBeNull();
  });

  it.each<[string, RegExp]>([
    ['http://api.example.com/', /must use https/],
    ['ftp://api.example.com/', /must use https/],
    ['javascript:alert(1)', /must use https/],
    ['file:///etc/passwd', /must use https/],
    ['/v1/items', /absolute URL/],
    ['api.example.com/v1', /absolute URL/],
    ['//api.example.com/v1', /absolute URL/],
    ['', /empty/],
    ['https:api.example.com', /start with https:\/\//],
    ['https:/api.example.com', /start with https:\/\//],
    ['https:\\\\api.example.com', /backslash/],
    ['https:///api.example.com', /host/],
    ['https://user:secret@api.example.com/', /user info/],
    ['https://user@api.example.com/', /user info/],
    ['https://:secret@api.example.com/', /user info/],
    ['https://@api.example.com/', /user info/],
    ['https://127.0.0.1:80%2f@api.example.com/', /user info/],
    ['https://api.example.com/v1#section', /fragment/],
    ['https://api.example.com/v1#', /fragment/],
    ['https://api.example.com/v1?key=value', /query/],
    ['https://api.example.com/v1?', /query/],
    [' https://api.example.com/', /whitespace/],
    ['https://api.exa\nmple.com/', /whitespace/],
    ['https://api.example.com/\t', /whitespace/],
    ['https://api.example.com\u0000/', /control/],
    ['https://api.example.com:0/', /port/],
    ['https://[fe80::1%25eth0]/', /absolute URL/],
    ['https://1.2.3.4.5/', /absolute URL/],
    [`https://api.example.com/${'a'.repeat(BASE_URL_MAX_LENGTH)}`, /at most 2048/],
  ])('refuses the malformed base URL %j', (raw, reason) => {
    expect(checkBaseUrl(raw)).toMatch(reason);
  });

  it.each<[string, RegExp]>([
    ['https://127.0.0.1/', LOOPBACK],
    ['https://127.0.0.1:8443/v1', LOOPBACK],
    ['https://127.255.255.254/', LOOPBACK],
    ['https://2130706433/', LOOPBACK],
    ['https://0x7f000001/', LOOPBACK],
    ['https://0x7f.1/', LOOPBACK],
    ['https://0177.0.0.1/', LOOPBACK],
    ['https://0177.1/', LOOPBACK],
    ['https://127.1', LOOPBACK],
    ['https://127.0.0.1./', LOOPBACK],
    ['https://127.0.0.1../', LOOPBACK],
    ['https://0x7f.0.0.1../', LOOPBACK],
    ['https://①②⑦.0.0.1/', LOOPBACK],
    ['https://0/', UNSPECIFIED],
    ['https://0.0.0.0', UNSPECIFIED],
    ['https://0.1.2.3/', UNSPECIFIED],
    ['https://10.0.0.1/', PRIVATE],
    ['https://012.0.0.1/', PRIVATE],
    ['https://172.16.0.1/', PRIVATE],
    ['https://172.31.255.255/', PRIVATE],
    ['https://192.168.1.1/', PRIVATE],
    ['https://0xc0a80101/', PRIVATE],
    ['https://169.254.1.1/', LINK_LOCAL],
    ['https://100.64.0.1/', /carrier-grade NAT/],
    ['https://100.127.255.254/', /carrier-grade NAT/],
    ['https://224.0.0.1/', /multicast/],
    ['https://239.255.255.250/', /multicast/],
    ['https://255.255.255.255/', /broadcast/],
    ['https://4294967295/', /broadcast/],
    ['https://240.0.0.1/', RESERVED],
    ['https://192.0.2.10/', RESERVED],
    ['https://198.51.100.7/', RESERVED],
    ['https://203.0.113.9/', RESERVED],
    ['https://198.18.0.1/', RESERVED],
    ['https://192.0.0.8/', RESERVED],
  ])('refuses the non-public IPv4 literal %s', (raw, reason) => {
    expect(checkBaseUrl(raw)).toMatch(reason);
  });

  it.each<[string, RegExp]>([
    ['https://[::]', UNSPECIFIED],
    ['https://[::1]/', LOOPBACK],
    ['https://[0:0:0:0:0:0:0:1]:8443/', LOOPBACK],
    ['https://[::ffff:127.0.0.1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[::ffff:7f00:1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[0:0:0:0:0:ffff:10.0.0.1]/', /embeds 10\.0\.0\.1.*private/],
    ['https://[::ffff:a9fe:a9fe]/', /embeds 169\.254\.169\.254.*metadata/],
    ['https://[::ffff:0:127.0.0.1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[::ffff:0.0.0.0]/', /embeds 0\.0\.0\.0.*unspecified/],
    ['https://[64:ff9b::127.0.0.1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[64:ff9b::a00:1]/', /embeds 10\.0\.0\.1.*private/],
    ['https://[64:ff9b:1::8.8.8.8]/', /local-use NAT64/],
    ['https://[2002:7f00:1::1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[2002:c0a8:101::]/', /embeds 192\.168\.1\.1.*private/],
    ['https://[2002:a9fe:a9fe::1]/', /embeds 169\.254\.169\.254.*metadata/],
    ['https://[::127.0.0.1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[::7f00:1]/', /embeds 127\.0\.0\.1.*loopback/],
    ['https://[::8.8.8.8]/', /deprecated IPv4-compatible/],
    ['https://[fe80::1]/', LINK_LOCAL],
    ['https://[febf::1]/', LINK_LOCAL],
    ['https://[fc00::1]/', /unique-local/],
    ['https://[fd12:3456:789a::1]/', /unique-local/],
    ['https://[fec0::1]/', /site-local/],
    ['https://[ff02::1]/', /multicast/],
    ['https://[ff05::1:3]/', /multicast/],
    ['https://[2001:db8::1]/', RESERVED],
    ['https://[3fff::1]/', RESERVED],
    ['https://[2001:2::1]/', RESERVED],
    ['https://[100::1]/', RESERVED],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo/],
    ['https://[4000::1]/', /not a global unicast/],
    ['https://[::1:0:0:1]/', /not a global unicast/],
  ])('refuses the non-public IPv6 literal %s', (raw, reason) => {
    expect(checkBaseUrl(raw)).toMatch(reason);
  });

  it.each<[string, RegExp]>([
    ['https://localhost/', LOOPBACK],
    ['https://localhost:8443/v1', LOOPBACK],
    ['https://LOCALHOST./', LOOPBACK],
    ['https://localhost./', LOOPBACK],
    ['https://localhost../', LOOPBACK],
    ['https://localhost%2e/', LOOPBACK],
    ['https://ｌｏｃａｌｈｏｓｔ/', LOOPBACK],
    ['https://%6c%6fcalhost/', LOOPBACK],
    ['https://a.b.localhost', LOOPBACK],
    ['https://api.localhost./', LOOPBACK],
    ['https://printer.local', /\.local\b/],
    ['https://PRINTER.LOCAL./', /\.local\b/],
    ['https://kubernetes.default.svc.cluster.local/', /\.local\b/],
    ['https://foo.internal/', /\.internal/],
    ['https://foo.internal./', /\.internal/],
    ['https://foo。internal/', /\.internal/],
    ['https://router.home.arpa/', /\.home\.arpa/],
    ['https://db.localdomain/', /\.localdomain/],
    ['https://nas.lan/', /\.lan/],
    ['https://wiki.corp/', /\.corp/],
    ['https://api.example.test/', /\.test/],
    ['https://metadata/', METADATA],
    ['https://metadata.google.internal/', METADATA],
    ['https://METADATA.GOOGLE.INTERNAL./computeMetadata/v1', METADATA],
    ['https://metadata.goog/', METADATA],
    ['https://instance-data/', METADATA],
    ['https://instance-data.ec2.internal/', METADATA],
    ['https://metadata.azure.com/', METADATA],
    ['https://metadata.tencentyun.com/', METADATA],
    ['https://169.254.169.254/latest/meta-data/', METADATA],
    ['https://0xa9fea9fe/', METADATA],
    ['https://169.254.170.2/v2/credentials', METADATA],
    ['https://100.100.100.200/latest/meta-data/', METADATA],
    ['https://[fd00:ec2::254]/', METADATA],
    ['https://intranet-wiki/', /fully qualified/],
    ['https://a..b.example.com/', /valid domain/],
    ['https://./', /valid host/],
  ])('refuses the non-public host name %s', (raw, reason) => {
    expect(checkBaseUrl(raw)).toMatch(reason);
  });

  it('names the normalised host in the reason', () => {
    expect(checkBaseUrl('https://0x7f.1/')).toBe('base_url host 127.0.0.1 is a loopback address');
  });

  it('names the embedded address of an IPv4-mapped IPv6 host in the reason', () => {
    expect(checkBaseUrl('https://[::ffff:10.1.2.3]/')).toBe(
      'base_url host [::ffff:a01:203] embeds 10.1.2.3, which is a private address',
    );
  });

  it('explains a plain-http URL', () => {
    expect(checkBaseUrl('http://api.example.com/')).toBe('base_url must use https');
  });
});

describe('backslashes', () => {
  it.each([
    'https://evil.com\\@127.0.0.1',
    'https://evil.com\\@api.example.com/',
    'https://api.example.com\\v1',
    'https://api.example.com/v1\\',
    'https://api.example.com/%5C/\\',
  ])('refuses %j, whatever the host', (raw) => {
    expect(checkBaseUrl(raw)).toBe('base_url must not contain a backslash');
  });
});

describe('mixed-script host labels', () => {
  it.each<[string, string]>([
    ['https://\u0430pple.com/', 'Cyrillic and Latin'],
    ['https://p\u0430ypal.com/', 'Latin and Cyrillic'],
    ['https://g\u03bfogle.com/', 'Latin and Greek'],
    ['https://api.\u0435xample.com/', 'Cyrillic and Latin'],
    ['https://xn--pple-43d.com/', 'Cyrillic and Latin'],
    ['https://\u0430\u0440ple.com/', 'Cyrillic and Latin'],
  ])('refuses %s (%s)', (raw, scripts) => {
    expect(checkBaseUrl(raw)).toMatch(new RegExp(`has a label mixing scripts \\(${scripts}\\)`));
  });

  it('names the label in its Unicode form', () => {
    expect(checkBaseUrl('https://\u0430pple.com/')).toBe(
      'base_url host xn--pple-43d.com has a label mixing scripts (Cyrillic and Latin): \u0430pple',
    );
  });

  it.each([
    'https://bücher.example/api',
    'https://яндекс.рф/',
    'https://例え.テスト.jp/',
    'https://東京tokyo.jp/',
    'https://한국어abc.kr/',
    'https://中文注音ㄅ.tw/',
    'https://ελληνικά.gr/',
    'https://api-2.example.com/',
  ])('accepts the single-script or CJK label %s', (raw) => {
    expect(checkBaseUrl(raw)).toBeNull();
  });

  it('ignores digits and hyphens when counting scripts', () => {
    expect(findMixedScriptLabel('xn--80ak6aa92e.com')).toBeNull();
    expect(findMixedScriptLabel('1-\u0430\u0431.com')).toBeNull();
  });
});

describe('normalizeBaseUrl', () => {
  it.each([
    ['https://Bücher.Example/API/v1', 'https://xn--bcher-kva.example/API/v1'],
    ['https://API.Example.COM/V1/', 'https://api.example.com/V1/'],
    ['https://api.example.com:443/v1', 'https://api.example.com/v1'],
    ['https://api.example.com:8443', 'https://api.example.com:8443'],
    ['https://例え.テスト.jp/', 'https://xn--r8jz45g.xn--zckzah.jp/'],
    ['https://[2001:4860:4860:0:0:0:0:8888]/dns', 'https://[2001:4860:4860::8888]/dns'],
    ['https://api.example.com', 'https://api.example.com'],
    ['https://api.example.com/a%20b/ü', 'https://api.example.com/a%20b/ü'],
  ])('stores %s as %s', (raw, normalised) => {
    expect(checkBaseUrl(raw)).toBeNull();
    expect(normalizeBaseUrl(raw)).toBe(normalised);
  });
});
