import { hash, verify } from '@node-rs/argon2'

/** Shortest and longest password accepted (long passphrases welcome; the cap bounds the hashing work). */
export const PASSWORD_MIN_LENGTH = 10
export const PASSWORD_MAX_LENGTH = 256

/** argon2id with the library's defaults (OWASP's minimum: m = 19 MiB, t = 2, p = 1), PHC string form. */
export function hashPassword(password: string): Promise<string> {
  return hash(password)
}

/**
 * A hash of nothing anyone types, verified when the sign-in name is unknown: an unknown name then costs the same
 * time as a wrong password, so timing does not tell them apart.
 */
let decoy: Promise<string> | undefined

/** Whether `password` matches `passwordHash`; with no hash (unknown account), a decoy verification, always false. */
export async function checkPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (passwordHash === undefined) {
    decoy ??= hash('antler decoy: no account has this password')
    await verify(await decoy, password).catch(() => false)
    return false
  }
  return verify(passwordHash, password).catch(() => false)
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`
  return undefined
}
