import { lookup as systemLookup } from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, type Dispatcher, errors as undiciErrors } from 'undici';
import { compileAllowlist, type EgressAllowlist } from '../domain/connectors/egress/allowlist.js';
import type {
  EgressClient,
  EgressRequest,
  EgressResponse,
  EgressSendOptions,
} from '../domain/connectors/egress/client.js';
import {
  EgressAddressRefusedError,
  EgressConnectionError,
  EgressDnsError,
  EgressError,
  EgressRedirectRefusedError,
  EgressResponseTooLargeError,
  EgressSchemeRefusedError,
  EgressTimeoutError,
  EgressTlsError,
} from '../domain/connectors/egress/errors.js';
import { describeNonPublicAddress, isCloudMetadataAddress } from '../domain/connectors/ip-literal.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Answers every address of a host name, as `dns.lookup(name, { all: true })` does. */
export type EgressLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface EgressClientOptions {
  /** Networks and host names that may be reached although their address is not public. Default: none. */
  allowlist?: EgressAllowlist;
  /** Time to resolve the name, connect and finish the TLS handshake. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Time from sending the request to receiving the response headers. Default 10000 ms. */
  headersTimeoutMs?: number;
  /** Longest pause between two chunks of the response body. Default 10000 ms. */
  bodyTimeoutMs?: number;
  /**
   * Time for the whole call: resolving, connecting, every redirect and the complete body; a call that
   * trickles its bytes ends here too. Default 30000 ms (CONNECTOR_CALL_TIMEOUT_MS).
   */
  callTimeoutMs?: number;
  /** Largest response body returned; a larger one is refused, not truncated. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Redirects followed, each to the same host and port only. Default 3. */
  maxRedirects?: number;
  /**
   * Certificate authorities to trust instead of Node's bundled list (tests' self-signed servers).
   * Default: the bundled list.
   */
  ca?: string | string[];
  /** Resolves host names (tests answer with addresses of their choice). Default: the system resolver. */
  lookup?: EgressLookup;
}

export const EGRESS_DEFAULTS = {
  connectTimeoutMs: 5000,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  callTimeoutMs: 30_000,
  maxResponseBytes: 1024 * 1024,
  maxRedirects: 3,
} as const;

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

const systemResolver: EgressLookup = (hostname) => systemLookup(hostname, { all: true, verbatim: true });

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

function classify(error: unknown, host: string): EgressError {
  if (error instanceof EgressError) return error;
  if (error instanceof undiciErrors.ConnectTimeoutError) {
    return new EgressTimeoutError('connect_timeout', `${host} did not accept a TLS connection in time`);
  }
  if (error instanceof undiciErrors.HeadersTimeoutError) {
    return new EgressTimeoutError('headers_timeout', `${host} did not send response headers in time`);
  }
  if (error instanceof undiciErrors.BodyTimeoutError) {
    return new EgressTimeoutError('body_timeout', `${host} stopped sending the response body`);
  }
  const code = String((error as { code?: unknown }).code ?? '');
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/u.test(code)) {
    return new EgressTlsError(`TLS with ${host} failed: ${code}`);
  }
  // A code or a name, never the error's own message: messages are ours alone, so none can quote a request.
  return new EgressConnectionError(`the connection to ${host} failed: ${code || (error as Error).name}`);
}

/**
 * An HTTPS client for connector calls. Every connection resolves the host itself and checks the very
 * addresses it will connect to (so a name cannot answer a public address to a check and a private one to
 * the connection), refuses any that is not public unless the allowlist names it, and never uses proxy
 * settings from the environment.
 */
export function createEgressClient(options: EgressClientOptions = {}): EgressClient {
  const settings = { ...EGRESS_DEFAULTS, ...options };
  const allow = compileAllowlist(options.allowlist ?? { networks: [], hosts: [] });
  const lookup = options.lookup ?? systemResolver;

  /** Why `address` may not be connected to on `port` for `hostname`, or null. */
  function refusalOf(hostname: string, address: string, port: number): string | null {
    const parsed = ipaddr.process(address);
    if (isCloudMetadataAddress(parsed)) return 'is a cloud metadata endpoint';
    const reason = describeNonPublicAddress(parsed);
    if (reason === null || allow.allowsHost(hostname, port) || allow.allowsAddress(parsed, port)) return null;
    return reason;
  }

  /** The address to connect to, once every address the name has was checked. */
  async function resolveChecked(name: string, port: number): Promise<string> {
    // Resolvers ignore trailing dots; so does the check ("127.0.0.1.." is 127.0.0.1).
    const hostname = name.replace(/\.+$/u, '');
    const family = net.isIP(hostname);
    const addresses =
      family !== 0
        ? [{ address: hostname, family }]
        : await withTimeout(
            lookup(hostname).catch((error: unknown) => {
              throw new EgressDnsError(
                `${hostname} could not be resolved: ${String((error as { code?: unknown }).code ?? error)}`,
              );
            }),
            settings.connectTimeoutMs,
            () => new EgressTimeoutError('connect_timeout', `${hostname} could not be resolved in time`),
          );
    const first = addresses[0];
    if (!first) throw new EgressDnsError(`${hostname} has no address`);
    // One non-public answer refuses the name: which answer a connection would use is not ours to pick.
    for (const { address } of addresses) {
      const reason = refusalOf(hostname, address, port);
      if (reason !== null) throw new EgressAddressRefusedError(hostname, address, port, reason);
    }
    return first.address;
  }

  const tlsConnect = buildConnector({
    timeout: settings.connectTimeoutMs,
    ...(options.ca ? { ca: options.ca } : {}),
  });

  const connect: buildConnector.connector = (connectOptions, callback) => {
    const { hostname, protocol } = connectOptions;
    if (protocol !== 'https:') {
      callback(new EgressSchemeRefusedError(`${protocol} connections are refused: https only`), null);
      return;
    }
    // undici passes an empty port for the scheme's default.
    const port = Number(connectOptions.port) || 443;
    resolveChecked(hostname, port).then(
      (address) => {
        // The name stays the TLS server name (SNI and certificate check); only the address is pinned.
        tlsConnect({ ...connectOptions, hostname: address }, (error, socket) => {
          if (error) {
            callback(error, null);
            return;
          }
          const peer = socket.remoteAddress;
          const reason = peer === undefined ? 'is unknown' : refusalOf(hostname, peer, port);
          if (reason !== null) {
            socket.destroy();
            callback(new EgressAddressRefusedError(hostname, peer ?? '?', port, reason), null);
            return;
          }
          callback(null, socket);
        });
      },
      (error: unknown) => callback(error as Error, null),
    );
  };

  // A plain Agent: unlike EnvHttpProxyAgent it never reads HTTP(S)_PROXY or NO_PROXY.
  const agent = new Agent({
    connect,
    headersTimeout: settings.headersTimeoutMs,
    bodyTimeout: settings.bodyTimeoutMs,
  });

  async function readCapped(response: Dispatcher.ResponseData): Promise<Buffer> {
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > settings.maxResponseBytes) {
      response.body.destroy();
      throw new EgressResponseTooLargeError(settings.maxResponseBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > settings.maxResponseBytes) {
        response.body.destroy();
        throw new EgressResponseTooLargeError(settings.maxResponseBytes);
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  /** The request and its redirects, until a final response and its whole body (or a refusal). */
  async function exchange(request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    let url = new URL(request.url);
    let { method, body } = request;
    let headers = request.headers;
    let redirects = 0;
    for (;;) {
      if (url.protocol !== 'https:') {
        throw new EgressSchemeRefusedError(`${url.protocol} URLs are refused: connectors use https only`);
      }
      try {
        const response = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: method as Dispatcher.HttpMethod,
          headers,
          signal,
          ...(body !== undefined ? { body } : {}),
        });
        const location = response.headers.location;
        if (REDIRECT_STATUSES.has(response.statusCode) && typeof location === 'string') {
          await response.body.dump();
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            throw new EgressRedirectRefusedError(`${url.host} redirected to an invalid location`);
          }
          if (next.protocol !== 'https:') {
            throw new EgressSchemeRefusedError(`${url.host} redirected to ${next.protocol}; https only`);
          }
          if (next.host !== url.host) {
            throw new EgressRedirectRefusedError(
              `${url.host} redirected to another host (${next.host}); only same-host redirects are followed`,
            );
          }
          redirects += 1;
          if (redirects > settings.maxRedirects) {
            throw new EgressRedirectRefusedError(
              `${url.host} redirected more than ${settings.maxRedirects} times`,
            );
          }
          if (response.statusCode === 303 || (response.statusCode <= 302 && method === 'POST')) {
            method = 'GET';
            body = undefined;
            headers = Object.fromEntries(
              Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'),
            );
          }
          url = next;
          continue;
        }
        if (method === 'HEAD') await response.body.dump();
        const bytes = method === 'HEAD' ? Buffer.alloc(0) : await readCapped(response);
        return {
          status: response.statusCode,
          headers: response.headers,
          body: bytes,
          url: url.href,
          redirects,
        };
      } catch (error) {
        throw classify(error, url.host);
      }
    }
  }

  /**
   * One call under one deadline: when it passes, the exchange is aborted (its socket closed) and the call
   * rejects with `call_timeout`, whatever stage it was in.
   */
  async function send(request: EgressRequest, options: EgressSendOptions = {}): Promise<EgressResponse> {
    const own = { at: Date.now() + settings.callTimeoutMs, ms: settings.callTimeoutMs };
    const deadline = options.deadline && options.deadline.at < own.at ? options.deadline : own;
    const host = new URL(request.url).host;
    const controller = new AbortController();
    const exchanged = exchange(request, controller.signal);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => {
          const error = new EgressTimeoutError(
            'call_timeout',
            `${host} did not finish the call within ${deadline.ms} ms`,
          );
          controller.abort(error);
          reject(error);
        },
        Math.max(0, deadline.at - Date.now()),
      );
    });
    // The aborted exchange rejects after the deadline did; that rejection has no one left to tell.
    exchanged.catch(() => {});
    try {
      return await Promise.race([exchanged, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function checkTarget(raw: string): Promise<void> {
    const url = new URL(raw);
    if (url.protocol !== 'https:')
      throw new EgressSchemeRefusedError(`${url.protocol} URLs are refused: https only`);
    await resolveChecked(url.hostname.replace(/^\[|\]$/gu, ''), Number(url.port) || 443);
  }

  let closing: Promise<void> | undefined;
  return {
    send,
    checkTarget,
    // Idempotent: an app may be closed by its server and again by its owner.
    close: () => {
      closing ??= agent.close();
      return closing;
    },
  };
}
