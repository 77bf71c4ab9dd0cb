import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Outside production a missing AUTH_JWT_SECRET is replaced by one kept under DATA_DIR, so tokens printed at
 * start-up stay valid across restarts.
 */
export async function loadOrCreateDevSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'dev-jwt-secret');
  const existing = await readFile(file, 'utf8').catch(() => '');
  if (existing.trim().length >= 32) return existing.trim();
  const secret = randomBytes(48).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
