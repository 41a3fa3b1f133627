// Whether dist/ holds a complete build of the current src/ (read by bin/antler.js, and by the tests to run the
// compiled code whenever it is current). Plain JavaScript: it runs before anything is compiled.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = new URL('../', import.meta.url)

/**
 * Why dist/ cannot be used as it is, or undefined when it is current. scripts/build.js writes dist/BUILD_STARTED_AT
 * last (the time the build started, so a source saved during it counts as newer).
 */
export function staleBuild() {
  const stamp = new URL('dist/BUILD_STARTED_AT', ROOT)
  const src = fileURLToPath(new URL('src/', ROOT))
  if (!existsSync(stamp)) return 'dist/ is missing or was not fully built'
  // An installed copy without src/ has nothing to compare with.
  if (!existsSync(src)) return undefined
  const builtAt = Number(readFileSync(stamp, 'utf8'))
  const files = readdirSync(src, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
  const newer = files
    .map((entry) => join(entry.parentPath, entry.name))
    .find((path) => statSync(path).mtimeMs > builtAt)
  return newer ? `${relative(src, newer)} changed since dist/ was built` : undefined
}
