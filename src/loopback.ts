/**
 * Whether a host name or address, as `HOST` or a URL's hostname gives it, is this machine's loopback:
 * `localhost`, 127.0.0.0/8 or ::1 (bracketed or not).
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
