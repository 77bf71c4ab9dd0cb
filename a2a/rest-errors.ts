import {
  type A2AError,
  ERROR_INFO_TYPE,
  RestContentTypeNotSupportedError,
  RestExtendedAgentCardNotConfiguredError,
  RestPushNotificationNotSupportedError,
  RestRequestMalformedError,
  RestTaskNotCancelableError,
  RestTaskNotFoundError,
  RestUnsupportedOperationError,
  RestVersionNotSupportedError,
  restStatusFor,
  toRestErrorBody,
} from '@a2a-js/sdk/errors';
import { a2aRestErrorResponse, rpcStatusNameOf } from '../src/errors.js';
import { A2A_ERRORS, type A2aError } from './errors.js';

type RestErrorClass = new (options: {
  message: string;
  metadata?: Record<string, string>;
  statusCode?: number;
}) => A2AError;

/**
 * The SDK's error of each of A2A's codes: its HTTP status, its `status` name and its ErrorInfo `reason` are
 * the SDK's (JSON-RPC's own codes for a request it cannot read are its RequestMalformedError, as the SDK maps
 * them). SERVER_ERROR and INTERNAL_ERROR are none of A2A's: their HTTP status is the refusal's own.
 */
const SDK_ERRORS: Partial<Record<number, RestErrorClass>> = {
  [A2A_ERRORS.PARSE_ERROR]: RestRequestMalformedError,
  [A2A_ERRORS.INVALID_REQUEST]: RestRequestMalformedError,
  [A2A_ERRORS.METHOD_NOT_FOUND]: RestRequestMalformedError,
  [A2A_ERRORS.INVALID_PARAMS]: RestRequestMalformedError,
  [A2A_ERRORS.TASK_NOT_FOUND]: RestTaskNotFoundError,
  [A2A_ERRORS.TASK_NOT_CANCELABLE]: RestTaskNotCancelableError,
  [A2A_ERRORS.PUSH_NOT_SUPPORTED]: RestPushNotificationNotSupportedError,
  [A2A_ERRORS.UNSUPPORTED_OPERATION]: RestUnsupportedOperationError,
  [A2A_ERRORS.CONTENT_TYPE_NOT_SUPPORTED]: RestContentTypeNotSupportedError,
  [A2A_ERRORS.EXTENDED_CARD_NOT_CONFIGURED]: RestExtendedAgentCardNotConfiguredError,
  [A2A_ERRORS.VERSION_NOT_SUPPORTED]: RestVersionNotSupportedError,
};

/** google.rpc.ErrorInfo's metadata is a map of strings: each fact as a string, anything else as its JSON. */
function metadataOf(data: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!data) return undefined;
  const entries = Object.entries(data).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return undefined;
  return Object.fromEntries(
    entries.map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
}

/** The domain of the ErrorInfo of a refusal that is none of A2A's (its reason is our error code). */
const OWN_DOMAIN = 'boardroom';

/** The HTTP status, headers and body of an A2A error on the HTTP+JSON binding. */
export function restErrorOf(error: A2aError): {
  status: number;
  headers: Record<string, string>;
  body: { status: string; details: unknown[] };
} {
  const headers = error.http?.headers ?? {};
  const metadata = metadataOf(error.data);
  const SdkError = SDK_ERRORS[error.code];
  if (SdkError) {
    const sdkError = new SdkError({
      message: error.message,
      ...(metadata ? { metadata } : {}),
      ...(error.http?.status ? { statusCode: error.http.status } : {}),
    });
    const status = restStatusFor(sdkError);
    const { error: body } = toRestErrorBody(sdkError, status);
    return { status, headers, body: { status: body.status, details: body.details } };
  }
  const declared = error.data?.status;
  const status =
    error.http?.status ??
    (typeof declared === 'number' && declared >= 400 && declared < 600 ? declared : 500);
  const code = error.data?.code;
  const details = metadata
    ? [
        {
          '@type': ERROR_INFO_TYPE,
          reason: typeof code === 'string' ? code : 'SERVER_ERROR',
          domain: OWN_DOMAIN,
          metadata,
        },
      ]
    : [];
  // Named as the SDK names 400, 404 and 500, and by google's mapping where it says UNKNOWN.
  return { status, headers, body: { status: rpcStatusNameOf(status), details } };
}

/** An A2A error answered on the HTTP+JSON binding. */
export function restErrorResponse(error: A2aError): Response {
  const { status, headers, body } = restErrorOf(error);
  return a2aRestErrorResponse(status, error.message, headers, globalThis, body);
}
