/** Where an api_key goes when the credential does not say: this request header. */
export const DEFAULT_API_KEY_HEADER = 'X-API-Key';

/** A connector's secret as sealed: one shape per auth_type that takes a credential. */
export type ConnectorSecret =
  | { authType: 'api_key'; key: string; in: 'header' | 'query'; name: string }
  | { authType: 'bearer'; token: string }
  | { authType: 'basic'; username: string; password: string }
  | {
      authType: 'oauth2_client_credentials';
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scope?: string | undefined;
    };

/** What the invoke path adds to an outbound request: header values and query parameters. */
export interface CredentialRequestParts {
  headers: Record<string, string>;
  query: Record<string, string>;
  /**
   * The secret values these carry or were made from (key, token, password and the base64 `user:pass`,
   * client secret, access token): no answer to a caller may hold them (redaction.ts).
   */
  secrets: string[];
}

/**
 * The token request of the OAuth 2.0 client credentials grant (RFC 6749 §4.4): a POST of `body`
 * (application/x-www-form-urlencoded) to `url` with `headers` (client_secret_basic authentication).
 */
export interface OAuth2TokenRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends a token request and answers the status and the parsed JSON body. The invoke path provides it,
 * built on its guarded egress client: the token URL is an outbound call like any other.
 */
export type FetchAccessToken = (request: OAuth2TokenRequest) => Promise<{ status: number; body: unknown }>;

/** An access token and when it stops being used (a margin before it expires). */
export interface AccessToken {
  token: string;
  /** Epoch milliseconds; null when the server did not say (then it is not reused). */
  reuseUntil: number | null;
}

const basicCredentials = (user: string, password: string) =>
  Buffer.from(`${user}:${password}`, 'utf8').toString('base64');
const basicAuth = (user: string, password: string) => `Basic ${basicCredentials(user, password)}`;

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before they are joined for Basic. */
const formEncoded = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

/** The secret values of a client credentials secret, besides the access tokens it obtains. */
export function clientSecrets(
  secret: Extract<ConnectorSecret, { authType: 'oauth2_client_credentials' }>,
): string[] {
  return [
    secret.clientSecret,
    basicCredentials(formEncoded(secret.clientId), formEncoded(secret.clientSecret)),
  ];
}

/** The header or query parameter that carries a secret that needs no outbound call. */
export function staticRequestParts(
  secret: Exclude<ConnectorSecret, { authType: 'oauth2_client_credentials' }>,
): CredentialRequestParts {
  switch (secret.authType) {
    case 'api_key':
      return secret.in === 'header'
        ? { headers: { [secret.name]: secret.key }, query: {}, secrets: [secret.key] }
        : { headers: {}, query: { [secret.name]: secret.key }, secrets: [secret.key] };
    case 'bearer':
      return { headers: { authorization: `Bearer ${secret.token}` }, query: {}, secrets: [secret.token] };
    case 'basic':
      return {
        headers: { authorization: basicAuth(secret.username, secret.password) },
        query: {},
        secrets: [secret.password, basicCredentials(secret.username, secret.password)],
      };
  }
}

/** The token request for a client credentials secret; client id and secret are form-encoded first. */
export function oauth2TokenRequest(
  secret: Extract<ConnectorSecret, { authType: 'oauth2_client_credentials' }>,
): OAuth2TokenRequest {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (secret.scope) form.set('scope', secret.scope);
  return {
    url: secret.tokenUrl,
    method: 'POST',
    headers: {
      authorization: basicAuth(formEncoded(secret.clientId), formEncoded(secret.clientSecret)),
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: form.toString(),
  };
}

/** Seconds before a token's announced expiry at which it is no longer reused. */
const EXPIRY_MARGIN_SECONDS = 30;

/**
 * Reads a token response (RFC 6749 §5.1): a 2xx JSON object with a string `access_token` and, when
 * given, `token_type` bearer. Answers the token, or the reason the response is not one; what the reason
 * quotes of the response passes through `redact` (the endpoint may echo the client secret).
 */
export function readTokenResponse(
  response: { status: number; body: unknown },
  now: number,
  redact: (text: string) => string = (text) => text,
): AccessToken | string {
  if (response.status < 200 || response.status > 299) {
    return `the token endpoint answered ${response.status}`;
  }
  const body = response.body as Record<string, unknown> | null;
  if (
    typeof body !== 'object' ||
    body === null ||
    typeof body.access_token !== 'string' ||
    !body.access_token
  ) {
    return 'the token endpoint answered no access_token';
  }
  if (body.token_type !== undefined && String(body.token_type).toLowerCase() !== 'bearer') {
    return `the token endpoint answered token_type ${redact(String(body.token_type))}, not bearer`;
  }
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number.NaN;
  const reuseUntil =
    Number.isFinite(expiresIn) && expiresIn > EXPIRY_MARGIN_SECONDS
      ? now + (expiresIn - EXPIRY_MARGIN_SECONDS) * 1000
      : null;
  return { token: body.access_token, reuseUntil };
}
