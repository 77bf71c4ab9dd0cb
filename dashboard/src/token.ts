const STORAGE_KEY = 'boardroom.token';

/**
 * The bearer token: from `#token=<JWT>` (the fragment never reaches the server; it is removed from the
 * address bar at once), else from this tab's session storage.
 */
export function takeToken(): string | null {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromUrl = fragment.get('token');
  if (fromUrl) {
    sessionStorage.setItem(STORAGE_KEY, fromUrl.trim());
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(STORAGE_KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(STORAGE_KEY, token.trim().replace(/^Bearer\s+/i, ''));
}

export function forgetToken(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
