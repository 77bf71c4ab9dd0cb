export { checkBaseUrl } from './base-url.js';
export {
  CONNECTOR_AUTH_TYPES,
  CONNECTOR_HTTP_METHODS,
  checkEndpointPath,
} from './endpoint-path.js';
