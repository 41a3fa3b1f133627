import type { TestContext } from 'node:test'

type Cleanup = () => unknown

/** The longest one cleanup may take before the next runs (stopping a process takes at most 10 s). */
const CLEANUP_TIMEOUT_MS = 20_000

const stacks = new WeakMap<TestContext, Cleanup[]>()

/**
 * Runs `cleanup` after the test, last registered first: what a test started after making a folder
 * (a store, a server, a process) stops before that folder is removed. node:test runs `t.after` hooks
 * in the order they were added and skips the rest once one throws (leaving servers open, so the file
 * never ends); here every cleanup runs, each bounded in time, and their errors are thrown at the end.
 */
export function onCleanup(t: TestContext, cleanup: Cleanup): void {
  const stack = stacks.get(t)
  if (stack) return void stack.push(cleanup)
  const cleanups = [cleanup]
  stacks.set(t, cleanups)
  t.after(async () => {
    const errors: unknown[] = []
    for (let next = cleanups.pop(); next; next = cleanups.pop()) {
      try {
        await within(Promise.resolve().then(next), CLEANUP_TIMEOUT_MS, `cleanup ${next.toString().slice(0, 80)}`)
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length === 1) throw errors[0]
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} cleanups failed`)
  })
}

/** `promise`'s outcome, or an error naming `what` once `ms` have passed (the timer never holds the process open). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)
    timer.unref()
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
