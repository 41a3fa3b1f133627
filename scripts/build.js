#!/usr/bin/env node
// `npm run build` (and `npm install` / `npm ci`, through `prepare`): compiles src/ into dist/ with tsc
// (tsconfig.build.json) and copies the files the code reads at run time (the GraphQL .proto, the GraphiQL page,
// the SHiP ABI: every file of src/ that is neither TypeScript nor a .mjs tsx bootstrap), so bin/antler.js runs
// dist/ alone. `--out DIR` builds elsewhere (a folder named dist; the build test uses one).
import { execFileSync } from 'node:child_process'
import { cpSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, extname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Read by bin/antler.js: no stamp means no complete build; a source newer than it means a stale one. */
const BUILD_STAMP = 'BUILD_STARTED_AT'
/** Extensions that are code, not assets: TypeScript (compiled) and the .mjs bootstraps that register tsx. */
const CODE = new Set(['.ts', '.mjs'])

const { values } = parseArgs({ options: { out: { type: 'string', default: join(ROOT, 'dist') } } })
const out = resolve(values.out)
// The folder is emptied first: refuse anything but a dist/ so a wrong --out cannot remove something else.
if (basename(out) !== 'dist') {
  process.stderr.write(`build: --out must be a folder named dist (got ${out})\n`)
  process.exit(2)
}

const startedAt = Date.now()
rmSync(out, { recursive: true, force: true })
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
try {
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' })
} catch {
  process.stderr.write('build: tsc failed (above); dist/ is incomplete and bin/antler.js will run the sources\n')
  process.exit(1)
}
cpSync(join(ROOT, 'src'), out, {
  recursive: true,
  filter: (source) => !CODE.has(extname(source)),
})
writeFileSync(join(out, BUILD_STAMP), `${startedAt}\n`)
