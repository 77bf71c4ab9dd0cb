/**
 * Key under which connector names are unique within a tenant: NFKC-normalised, trimmed and lower-cased, so
 * names that differ only in case, surrounding spaces or compatibility forms (full-width letters, ligatures)
 * collide.
 */
export function normalizeConnectorName(name: string): string {
  return name.normalize('NFKC').trim().toLowerCase();
}
