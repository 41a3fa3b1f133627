/** At most this many failed sign-ins per minute, per client IP and per sign-in name. */
export const SIGN_IN_FAILURES_PER_MINUTE = 10
const WINDOW_MS = 60_000
/** Names and IPs tracked at once (the oldest are forgotten first): bounded memory under a spray of names. */
const MAX_TRACKED = 10_000

/**
 * Failed sign-ins per minute, by IP and by name: after 10 in a window, every attempt from that IP or for that name is
 * refused until the window ends, before the password is checked (a correct password in a blocked window is refused
 * too, so guessing gains nothing from the block). In the process's memory: each API replica counts its own.
 */
export interface SignInThrottle {
  /** Seconds until an attempt may be made for this IP and name; 0 when it may be made now. */
  retryAfterSeconds(ip: string, login: string): number
  /** Counts an attempt as failed: done before the password is checked, so attempts made at once all count. */
  failed(ip: string, login: string): void
  /** Takes back the count of an attempt that succeeded. */
  forgive(ip: string, login: string): void
}

export function createSignInThrottle(now: () => number = Date.now): SignInThrottle {
  const windows = new Map<string, { readonly startMs: number; count: number }>()
  const current = (key: string) => {
    const window = windows.get(key)
    return window && now() - window.startMs < WINDOW_MS ? window : undefined
  }
  const wait = (key: string) => {
    const window = current(key)
    if (!window || window.count < SIGN_IN_FAILURES_PER_MINUTE) return 0
    return Math.max(1, Math.ceil((window.startMs + WINDOW_MS - now()) / 1000))
  }
  const count = (key: string) => {
    const window = current(key)
    if (window) return void window.count++
    windows.delete(key)
    if (windows.size >= MAX_TRACKED) windows.delete(windows.keys().next().value as string)
    windows.set(key, { startMs: now(), count: 1 })
  }
  return {
    retryAfterSeconds: (ip, login) => Math.max(wait(`ip:${ip}`), wait(`login:${login}`)),
    failed(ip, login) {
      count(`ip:${ip}`)
      count(`login:${login}`)
    },
    forgive(ip, login) {
      for (const key of [`ip:${ip}`, `login:${login}`]) {
        const window = current(key)
        if (window && window.count > 0) window.count--
      }
    },
  }
}
