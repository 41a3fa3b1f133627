import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AccountsService } from '../../accounts/index.ts'
import type { ApiKeyService, AuthLimits } from '../../auth/index.ts'
import type { KeyStore, PortalStore, WebhookStore } from '../../store/index.ts'
import type { WebhookService } from '../../webhooks/index.ts'
import { toAntlerError } from '../wire-error.ts'
import { sendPage, type PageFrame, type PortalAssetUrls } from './views.ts'

/** What the portal's routes use. */
export interface PortalServices {
  readonly accounts: AccountsService
  readonly keys: ApiKeyService
  readonly store: Pick<PortalStore, 'keyUsage' | 'hasSetupToken' | 'accountCount' | 'auditEntries'> &
    Pick<KeyStore, 'apiKeyById'> &
    Pick<WebhookStore, 'webhook'>
  /** Re-reads revoked keys now: a revoke in the portal is refused by this process at once, by others within 1 s. */
  refreshRevocations(): Promise<void>
  /** The per-type defaults the key page shows next to a key's overrides. */
  readonly limits: AuthLimits
  readonly webhooks?: WebhookService
  /** The setup token's file, removed once the token created the first account. */
  readonly setupFile?: string
  readonly now?: () => number
}

/** The services and the asset URLs, for every route module of the portal. */
export interface PortalContext extends PortalServices {
  readonly assets: PortalAssetUrls
}

/** A page of a signed-in account: the layout's frame from the request's session. */
export function frame(
  context: PortalContext,
  request: FastifyRequest,
  title: string,
  nav?: PageFrame['nav'],
): PageFrame {
  const active = request.portalSession
  return { title, account: active?.account, csrf: active?.session.csrfToken, nav, assets: context.assets }
}

/** An error as a form shows it: message, code and the fields' reasons (validation). */
export function formError(thrown: unknown): { message: string; code: string; fields?: Record<string, string[]> } {
  const { error } = toAntlerError(thrown, {})
  const errors = (error.details as { errors?: Record<string, string[]> }).errors
  return { message: error.message, code: error.code, ...(errors ? { fields: errors } : {}) }
}

/** The status a refused form answers with (the error's own: 400, 401, 429…). */
export function formStatus(thrown: unknown): number {
  return toAntlerError(thrown, {}).error.status
}

/** Re-renders a form page with the error that refused it. */
export function sendFormError<Page extends PageFrame>(
  reply: FastifyReply,
  template: string,
  data: Page,
  thrown: unknown,
): FastifyReply {
  const { error, unexpected } = toAntlerError(thrown, {})
  if (unexpected) reply.request.log.error({ err: thrown }, 'unexpected error')
  const retryAfter = error.details.retry_after_seconds
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
  reply.failure = error
  return sendPage(reply, template, { ...data, error: formError(thrown) }, error.status)
}
