import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AntlerError } from '../../antelope/index.ts'
import type { AccountsService } from '../../accounts/index.ts'
import type { ApiKeyService, AuthLimits } from '../../auth/index.ts'
import type { KeyStore, PortalStore, WebhookStore } from '../../store/index.ts'
import type { WebhookService } from '../../webhooks/index.ts'
import { renderErrorObject, resolveError, type ErrorRenderer } from '../plugins/errors.ts'
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

/** How a page shows an error (the error page, or a form shown again). */
interface PageError {
  readonly message: string
  readonly code: string
  /** Each field's reasons (validation). */
  readonly fields?: Record<string, string[]>
  /** The trace id to quote, for an error that is not the visitor's doing (5xx). */
  readonly traceId?: string
}

function pageError(error: AntlerError, traceId: string): PageError {
  const errors = (error.details as { errors?: Record<string, string[]> }).errors
  return {
    message: error.message,
    code: error.code,
    ...(errors ? { fields: errors } : {}),
    ...(error.status >= 500 ? { traceId } : {}),
  }
}

/**
 * How the portal shows an error the app's error handling resolved: the standard error object for the page's own JSON
 * (`data` routes), else a page with the message, the code and the trace id (the status and headers are already set).
 */
export function renderPortalError(context: PortalContext): ErrorRenderer {
  return (request, reply, error) => {
    if (request.routeOptions.config?.portal === 'data') return renderErrorObject(request, reply, error)
    const title = error.status === 404 ? 'Not found' : error.status >= 500 ? 'Server error' : 'Refused'
    const traceId = String(request.id)
    return sendPage(
      reply,
      './error',
      { ...frame(context, request, title), error: pageError(error, traceId), traceId },
      error.status,
    )
  }
}

/**
 * Re-renders a form page with the error that refused it. The app's error handling decides the status, the log line
 * and the headers as for any error; the portal only shows it in the form.
 */
export function sendFormError<Page extends PageFrame>(
  reply: FastifyReply,
  template: string,
  data: Page,
  thrown: unknown,
): FastifyReply {
  const error = resolveError(reply.request, reply, thrown)
  return sendPage(reply, template, { ...data, error: pageError(error, String(reply.request.id)) }, error.status)
}
