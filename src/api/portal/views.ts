import { Eta } from 'eta'
import { fileURLToPath } from 'node:url'
import type { FastifyReply } from 'fastify'
import type { AccountRecord } from '../../store/index.ts'

/** The page templates (src/api/portal/views, copied to dist/ by the build). */
const VIEWS = fileURLToPath(new URL('./views/', import.meta.url))

/** Eta with HTML escaping of every `<%= %>`: a key name or an origin can never become markup. */
const eta = new Eta({ views: VIEWS, autoEscape: true, cache: true, defaultExtension: '.eta' })

/** What every page's layout shows. */
export interface PageFrame {
  readonly title: string
  /** The signed-in account (absent on the sign-in and setup pages). */
  readonly account?: AccountRecord
  /** The session's CSRF token, put in every form. */
  readonly csrf?: string
  /** Which navigation entry is current. */
  readonly nav?: 'keys' | 'usage' | 'webhooks' | 'audit'
  /** The page's own stylesheets and scripts, after the portal's. */
  readonly assets: PortalAssetUrls
}

/** The URLs of the portal's stylesheets and scripts (versioned package files, our own revalidated ones). */
export interface PortalAssetUrls {
  readonly styles: readonly string[]
  readonly scripts: readonly string[]
}

/**
 * Renders a page into the reply: HTML, never cached (a page may hold a key shown once, and every page is one
 * account's).
 */
export function sendPage<Page extends PageFrame>(
  reply: FastifyReply,
  template: string,
  data: Page,
  status = 200,
): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .send(eta.render(template, data))
}

/** Time as the portal shows it: UTC, to the second. */
export const formatTime = (ms: number | undefined): string =>
  ms === undefined
    ? '—'
    : new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
