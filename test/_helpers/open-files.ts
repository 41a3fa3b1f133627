import { readdirSync, readlinkSync, realpathSync } from 'node:fs'
import { sep } from 'node:path'

/**
 * The files under `dir` this process still holds open (a store, a log), read from /proc/self/fd;
 * none where /proc is missing. Threads count (a store's checkpoint thread); child processes do not.
 */
export function openFilesUnder(dir: string): string[] {
  let fds: string[]
  try {
    fds = readdirSync('/proc/self/fd')
  } catch {
    return []
  }
  const prefix = realpathSync(dir) + sep
  const open = new Set<string>()
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, '')
      if (target.startsWith(prefix)) open.add(target)
    } catch {
      // Closed since the listing.
    }
  }
  return [...open]
}
