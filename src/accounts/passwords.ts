import { hash, verify } from '@node-rs/argon2'

/** Shortest and longest password accepted (long passphrases welcome; the cap bounds the hashing work). */
export const PASSWORD_MIN_LENGTH = 10
export const PASSWORD_MAX_LENGTH = 256

/** argon2id with the library's defaults (OWASP's minimum: m = 19 MiB, t = 2, p = 1), PHC string form. */
export function hashPassword(password: string): Promise<string> {
  return hash(password)
}

/** Whether a password matches a stored hash; with no hash (an unknown account), a decoy verification, always false. */
export type PasswordCheck = (passwordHash: string | undefined, password: string) => Promise<boolean>

/**
 * A password check owning its decoy: a hash of nothing anyone types, made at the first unknown sign-in name and
 * verified for every one, so an unknown name costs the same time as a wrong password and timing does not tell them
 * apart. One per accounts service (no module state).
 */
export function createPasswordCheck(): PasswordCheck {
  let decoy: Promise<string> | undefined
  return async (passwordHash, password) => {
    if (passwordHash === undefined) {
      decoy ??= hash('antler decoy: no account has this password')
      await verify(await decoy, password).catch(() => false)
      return false
    }
    return verify(passwordHash, password).catch(() => false)
  }
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`
  return undefined
}
