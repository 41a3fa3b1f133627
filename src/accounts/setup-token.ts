import { chmod, mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { PortalStore } from '../store/index.ts'
import { randomToken, tokenHash } from './tokens.ts'

/** The file beside the store that holds the setup token (mode 0600) until the first account exists. */
export const SETUP_TOKEN_FILE = 'portal-setup-token'

/**
 * While no account exists, a new one-time setup token (its hash in the store, replacing an unused one; the token in
 * `<dataDir>/portal-setup-token`, mode 0600): answers it, for the start to print. Once an account exists: removes the
 * file and answers undefined. There is no default account: whoever holds the token creates the first one.
 */
export async function prepareSetupToken(
  store: Pick<PortalStore, 'accountCount' | 'putSetupToken'>,
  dataDir: string,
  now: () => number = Date.now,
): Promise<{ token: string; file: string } | undefined> {
  const file = join(dataDir, SETUP_TOKEN_FILE)
  if ((await store.accountCount()) > 0) {
    await rm(file, { force: true })
    return undefined
  }
  const token = randomToken()
  await store.putSetupToken(tokenHash(token), now())
  await mkdir(dataDir, { recursive: true })
  await writeFile(file, `${token}\n`, { mode: 0o600 })
  // writeFile's mode applies only when it creates the file.
  await chmod(file, 0o600)
  return { token, file }
}
