import type { Config } from '../src/config.js';
import { isLoopbackHost } from '../src/loopback.js';

/** Who may reach the MCP endpoint, by the `Origin` and `Host` of the request. */
export interface OriginPolicy {
  /** Origins whose pages may call the endpoint (MCP_ALLOWED_ORIGINS). */
  allowedOrigins: ReadonlySet<string>;
  /** Host names accepted besides loopback ones (MCP_ALLOWED_HOSTS), lower case. */
  allowedHosts: ReadonlySet<string>;
  /** The server listens on loopback (HOST): only loopback and allowed host names may be named by `Host`. */
  loopbackOnly: boolean;
}

export const originPolicyOf = (config: Config): OriginPolicy => ({
  allowedOrigins: new Set(config.mcp.allowedOrigins),
  allowedHosts: new Set(config.mcp.allowedHosts),
  loopbackOnly: isLoopbackHost(config.host),
});

/** The host name of a `Host` value (`127.0.0.1:4000` → `127.0.0.1`, `[::1]:4000` → `[::1]`), or null. */
function hostnameOf(host: string): string | null {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/** Whether `origin` is `http(s)://` + exactly the request's `Host`. */
function isOwnOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin && url.host === host
    );
  } catch {
    return false;
  }
}

/**
 * Why the request may not use the MCP endpoint, or null when it may; checked before anything else
 * (authentication included), as MCP's transport asks against DNS rebinding:
 * - an `Origin` (a browser page) must be one of MCP_ALLOWED_ORIGINS, or the server's own origin on a
 *   loopback host (the page came from this very server); a request without one (any non-browser client)
 *   passes. A foreign page's own origin is never enough elsewhere: a rebound name is the attacker's own.
 * - while HOST is loopback, `Host` must name a loopback address (`localhost`, 127.0.0.0/8, `[::1]`) or one
 *   of MCP_ALLOWED_HOSTS: a page whose name was rebound to 127.0.0.1 sends its own name.
 */
export function originRefusal(policy: OriginPolicy, request: Request, url: URL): string | null {
  const host = (request.headers.get('host') ?? url.host).toLowerCase();
  const hostname = hostnameOf(host);
  const loopbackHost = hostname !== null && isLoopbackHost(hostname);
  const origin = request.headers.get('origin');
  if (origin !== null && !policy.allowedOrigins.has(origin) && !(loopbackHost && isOwnOrigin(origin, host))) {
    return `Forbidden: the origin ${origin} may not use the MCP endpoint`;
  }
  if (policy.loopbackOnly && !loopbackHost && !(hostname !== null && policy.allowedHosts.has(hostname))) {
    return `Forbidden: the host ${request.headers.get('host') ?? url.host} may not use the MCP endpoint`;
  }
  return null;
}
