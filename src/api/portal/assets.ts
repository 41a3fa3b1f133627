import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { asset, CSS, JS, packageAssets, REVALIDATED, sendAsset, type Asset } from '../static-assets.ts'
import type { PortalAssetUrls } from './views.ts'

const BASE = '/portal/assets'
const OWN_DIR = fileURLToPath(new URL('./assets/', import.meta.url))

/** uPlot (a small chart library) from its npm package; our stylesheet and script (a few KB) from assets/. */
async function portalAssets(): Promise<Asset[]> {
  const vendor = await packageAssets(BASE, [
    { pkg: 'uplot', file: 'dist/uPlot.min.css', type: CSS },
    { pkg: 'uplot', file: 'dist/uPlot.iife.min.js', type: JS },
  ])
  const own = await Promise.all(
    [
      ['portal.css', CSS],
      ['portal.js', JS],
    ].map(async ([file, type]) => asset(`${BASE}/${file}`, type, REVALIDATED, await readFile(`${OWN_DIR}${file}`))),
  )
  return [...vendor, ...own]
}

/** Serves the portal's assets (no session needed: they hold no data) and answers their URLs for the pages. */
export async function servePortalAssets(app: FastifyInstance): Promise<PortalAssetUrls> {
  const files = await portalAssets()
  const options = {
    config: { public: true, portal: 'open' as const },
    schema: { hide: true },
    compress: false as const,
  }
  for (const file of files) app.get(file.url, options, (request, reply) => sendAsset(file, request, reply))
  return {
    styles: files.filter((f) => f.type === CSS).map((f) => f.url),
    scripts: files.filter((f) => f.type === JS).map((f) => f.url),
  }
}
