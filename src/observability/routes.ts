/** Paths reported as they are by metrics and traces. */
export const FIXED_ROUTES = ['/graphql', '/healthz', '/readyz', '/metrics', '/docs', '/api/v1/openapi.json'];

/**
 * The route label of a path: a fixed path, the REST template it matches (`/api/v1/agents/{role}/chat`),
 * or `unmatched`, so ids in paths and unknown paths never become label values.
 */
export function routeMatcher(
  templates: readonly string[],
  fixed: readonly string[] = FIXED_ROUTES,
): (pathname: string) => string {
  const compiled = templates.map((template) => {
    const segments = template
      .split('/')
      .map((segment) => (segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    return { template, pattern: new RegExp(`^${segments.join('/')}$`) };
  });
  const exact = new Set(fixed);
  return (pathname) =>
    exact.has(pathname)
      ? pathname
      : (compiled.find(({ pattern }) => pattern.test(pathname))?.template ?? 'unmatched');
}
