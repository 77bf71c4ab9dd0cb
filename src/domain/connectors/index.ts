export { BASE_URL_MAX_LENGTH, checkBaseUrl, normalizeBaseUrl, originOf } from './base-url.js';
export { normalizeConnectorName } from './connector-name.js';
export {
  CONNECTOR_AUTH_TYPES,
  CONNECTOR_HTTP_METHODS,
  type ConnectorAuthType,
  type ConnectorHttpMethod,
  checkEndpointPath,
  ENDPOINT_PATH_MAX_LENGTH,
} from './endpoint-path.js';
