import { ConnectorError } from '../../domain/connectors/errors.js';
import { serviceError } from '../../errors.js';

/** A connector domain refusal as the GraphQL error of its code (and so the REST status); others unchanged. */
export function asServiceError(error: unknown): unknown {
  if (!(error instanceof ConnectorError)) return error;
  const headers = error.headers();
  return serviceError(error.code, error.message, {
    extensions: { reason: error.reason, ...error.facts() },
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  });
}

/** A resolver whose connector refusals reach the client as their codes. */
export function mappingConnectorErrors<Args extends unknown[], Result>(
  resolve: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return async (...args) => {
    try {
      return await resolve(...args);
    } catch (error) {
      throw asServiceError(error);
    }
  };
}
