import { z } from 'zod';
import { builder } from '../../builder.js';
import { checkBaseUrl } from '../../domain/connectors/base-url.js';
import {
  assertCredentialUsable,
  clearConnectorCredential,
  setConnectorCredential,
} from '../../domain/connectors/credential-store.js';
import { type ConnectorSecret, DEFAULT_API_KEY_HEADER } from '../../domain/connectors/credentials.js';
import { isTransportHeader } from '../../domain/connectors/invoke.js';
import { graphqlArg, idArg, zodField, zodInputType } from '../args.js';
import { ConnectorRef } from '../connectors.js';

builder.prismaObject('ConnectorCredential', {
  description:
    'What may be shown of a connector’s stored secret: never the secret, only a fingerprint and when it was set.',
  fields: (t) => ({
    authType: t.exposeString('authType', { description: 'The auth_type the secret was set for.' }),
    fingerprint: t.exposeString('fingerprint', {
      description:
        'First bytes of a keyed hash of the secret: changes whenever the secret does, reveals nothing of it.',
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the secret was last set.' }),
    origin: t.exposeString('origin', {
      description:
        'The origin (https://host[:port]) of base_url when the secret was set: the only place it is sent.',
    }),
    usable: t.boolean({
      description:
        'Whether calls use it: false once base_url moved to another origin or auth_type changed, until it is set again.',
      select: { connector: { select: { id: true, template: true } } },
      resolve: (credential) => unusableReason(credential, credential.connector) === null,
    }),
    unusableReason: t.string({
      nullable: true,
      description: 'Why calls do not use it (the CONFLICT a call would answer); null when usable.',
      select: { connector: { select: { id: true, template: true } } },
      resolve: (credential) => unusableReason(credential, credential.connector),
    }),
  }),
});

/** The refusal a call would answer for this credential, or null. */
function unusableReason(
  credential: Parameters<typeof assertCredentialUsable>[0],
  connector: Parameters<typeof assertCredentialUsable>[1],
): string | null {
  try {
    assertCredentialUsable(credential, connector);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const CONTROL_CHARACTER = /\p{Cc}/u;
const noControlCharacters = { error: 'must not contain control characters' };
/** Secret text: what will travel in a header must not be able to break out of it. */
const secretText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => !CONTROL_CHARACTER.test(value), noControlCharacters);

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const headerName = z
  .string()
  .min(1)
  .max(128)
  .refine((name) => HEADER_NAME.test(name), { error: 'must be an HTTP header name (RFC 9110 token)' })
  .refine((name) => !isTransportHeader(name), {
    error: 'names a header the HTTP client sets itself',
  });

const apiKeySchema = z
  .object({
    key: secretText(4096),
    header: graphqlArg(headerName.nullish(), {
      description: `Request header that carries the key (default ${DEFAULT_API_KEY_HEADER}); not with queryParam.`,
    }),
    queryParam: graphqlArg(secretText(128).nullish(), {
      description: 'Query parameter that carries the key instead of a header.',
    }),
  })
  .refine((value) => value.header == null || value.queryParam == null, {
    error: 'give header or queryParam, not both',
    path: ['queryParam'],
  });
zodInputType('ApiKeyCredentialInput', apiKeySchema);

const tokenUrl = z.string().superRefine((value, ctx) => {
  const reason = checkBaseUrl(value);
  if (reason !== null) ctx.addIssue({ code: 'custom', message: reason, input: value });
});

const bearerSchema = z.object({ token: secretText(8192) });
zodInputType('BearerCredentialInput', bearerSchema);

const basicSchema = z.object({
  username: graphqlArg(
    secretText(256).refine((value) => !value.includes(':'), {
      error: 'must not contain a colon',
    }),
    { description: 'Without a colon (RFC 7617).' },
  ),
  password: secretText(1024),
});
zodInputType('BasicCredentialInput', basicSchema);

const oauth2ClientCredentialsSchema = z.object({
  tokenUrl: graphqlArg(tokenUrl, { description: 'Absolute https URL of a public host.' }),
  clientId: secretText(256),
  clientSecret: secretText(4096),
  scope: graphqlArg(secretText(1024).nullish(), {
    description: 'Space-separated scopes to request, if any.',
  }),
});
zodInputType('OAuth2ClientCredentialsInput', oauth2ClientCredentialsSchema);

const credentialSchema = z
  .object({
    apiKey: apiKeySchema.nullish(),
    bearer: bearerSchema.nullish(),
    basic: basicSchema.nullish(),
    oauth2ClientCredentials: oauth2ClientCredentialsSchema.nullish(),
  })
  .superRefine((value, ctx) => {
    const given = Object.entries(value).filter(([, shape]) => shape != null);
    if (given.length === 1) return;
    ctx.addIssue({
      code: 'custom',
      message: 'give exactly one of api_key, bearer, basic, oauth2_client_credentials',
      input: value,
    });
  });

zodInputType('ConnectorCredentialInput', credentialSchema, {
  description: 'Exactly one field, the one named by the template’s auth_type.',
});

const connectorId = idArg();
export const setConnectorCredentialArgs = z.object({
  id: connectorId,
  input: credentialSchema,
});

/** The secret of a validated credential input. */
function secretOf(input: z.output<typeof credentialSchema>): ConnectorSecret {
  if (input.apiKey) {
    const { key, header, queryParam } = input.apiKey;
    return queryParam
      ? { authType: 'api_key', key, in: 'query', name: queryParam }
      : { authType: 'api_key', key, in: 'header', name: header ?? DEFAULT_API_KEY_HEADER };
  }
  if (input.bearer) return { authType: 'bearer', token: input.bearer.token };
  if (input.basic) return { authType: 'basic', ...input.basic };
  const oauth2 = input.oauth2ClientCredentials;
  if (!oauth2) throw new Error('the credential schema admits exactly one shape');
  return {
    authType: 'oauth2_client_credentials',
    tokenUrl: oauth2.tokenUrl,
    clientId: oauth2.clientId,
    clientSecret: oauth2.clientSecret,
    ...(oauth2.scope ? { scope: oauth2.scope } : {}),
  };
}

builder.mutationField('setConnectorCredential', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: ConnectorRef,
    description:
      'Seals and stores the connector’s secret, replacing the current one (rotation); the shape given must be the template’s auth_type. Needs CONNECTOR_SECRETS_KEY (NOT_CONFIGURED otherwise). Operator or chairman.',
    ...zodField(t, setConnectorCredentialArgs, (_root, { id, input }, context) =>
      setConnectorCredential(context, context.services.config.connectorSecretsKeys, {
        id,
        secret: secretOf(input),
      }),
    ),
  }),
);

builder.mutationField('clearConnectorCredential', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: ConnectorRef,
    description: 'Removes the connector’s stored secret, if any (operator or chairman).',
    ...zodField(t, z.object({ id: connectorId }), (_root, { id }, context) =>
      clearConnectorCredential(context, id),
    ),
  }),
);
