import { defineError } from '../error-definition.ts'

type NoDetails = Record<string, never>

/** The codes of the management portal (`/portal`) and its accounts. */
export const PORTAL_ERRORS = {
  portal_session_required_error: defineError<NoDetails>({
    status: 401,
    message: () => 'Sign in to the portal first (no session, or it ended).',
  }),
  // Also a form posted from another site: the token is bound to the session, which that site cannot read.
  portal_csrf_error: defineError<{ reason: string }>({
    status: 403,
    message: () => 'This form is stale or came from another site: reload the page and try again.',
  }),
  // One message for an unknown name, a wrong password and a disabled account: a sign-in form must not tell them apart.
  portal_sign_in_failed_error: defineError<NoDetails>({
    status: 401,
    message: () => 'Wrong sign-in name or password.',
  }),
  portal_setup_token_error: defineError<NoDetails>({
    status: 401,
    message: () => 'The setup token is wrong or was already used (the first start of antler printed it).',
  }),
  portal_key_not_found_error: defineError<{ id: string }>({
    status: 404,
    message: (d) => `No API key ${d.id} in this account.`,
  }),
  portal_account_not_found_error: defineError<{ account: string }>({
    status: 404,
    message: (d) => `No portal account ${d.account}.`,
  }),
} as const
