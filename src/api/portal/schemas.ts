import { Type } from '@fastify/type-provider-typebox'

/*
 * What every portal request may carry: the contract the routes' types come from. Forms arrive urlencoded
 * (@fastify/formbody, fast-querystring): every value is a string; a field sent twice is an array (refused: each field
 * is one string); an unchecked checkbox is absent; an empty input is ''. A form's schema names the fields its page's
 * form sends and no other: any other field is refused with `request_validation_error` naming it, as a misspelt API
 * field is. Checks that show the form again with the field's reason (a web key with no origin, a limit that is not a
 * number) are the routes'; a body these schemas refuse gets the error page.
 */

/** A form's fields: these and no other. */
const FORM = { additionalProperties: false } as const

/** The session's CSRF token, in every form that changes something (the guard checks it; `X-CSRF-Token` also works). */
const Csrf = { _csrf: Type.Optional(Type.String({ maxLength: 256 })) }

const KeyType = Type.Union([Type.Literal('server'), Type.Literal('web'), Type.Literal('mobile')])
const Finality = Type.Union([Type.Literal('reversible'), Type.Literal('irreversible')])
/** One origin per line (or separated by spaces or commas). */
const Origins = Type.String({ maxLength: 8192 })
/** A per-key limit as typed: empty for the type's default, else a whole number (checked by the route). */
const LimitField = Type.String({ maxLength: 16 })

export const KeyParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
export const WebhookParams = Type.Object({ id: Type.String({ maxLength: 64 }) })

/** A form that carries nothing but its CSRF token (sign-out, pause, resume, test). */
export const CsrfBody = Type.Object(Csrf, FORM)

export const SignInBody = Type.Object(
  { login: Type.String({ maxLength: 256 }), password: Type.String({ maxLength: 1024 }) },
  FORM,
)
export const SetupBody = Type.Object(
  {
    token: Type.String({ maxLength: 256 }),
    login: Type.String({ maxLength: 256 }),
    password: Type.String({ maxLength: 1024 }),
  },
  FORM,
)

export const CreateKeyBody = Type.Object(
  { ...Csrf, name: Type.String({ maxLength: 256 }), type: KeyType, origins: Type.Optional(Origins) },
  FORM,
)
/** The edit form: `origins` only on a web key's page; a limit left empty is no override. */
export const EditKeyBody = Type.Object(
  {
    ...Csrf,
    name: Type.String({ maxLength: 256 }),
    origins: Type.Optional(Origins),
    callsPerMinute: Type.Optional(LimitField),
    tokensPerHour: Type.Optional(LimitField),
  },
  FORM,
)
/** The grace of the old key, in seconds: the form's three radio buttons. */
export const RotateKeyBody = Type.Object(
  { ...Csrf, grace: Type.Union([Type.Literal('0'), Type.Literal('3600'), Type.Literal('86400')]) },
  FORM,
)
/** The confirm checkbox must be checked (absent when it is not). */
export const RevokeKeyBody = Type.Object({ ...Csrf, confirm: Type.Literal('yes') }, FORM)

export const CreateWebhookBody = Type.Object(
  {
    ...Csrf,
    key_id: Type.String({ maxLength: 64 }),
    url: Type.String({ maxLength: 2048 }),
    query: Type.String({ maxLength: 4096 }),
    finality: Finality,
  },
  FORM,
)
/** The block to deliver again from, as typed (a number of 1 or more, checked by the route). */
export const ReplayWebhookBody = Type.Object({ ...Csrf, from_block: Type.String({ maxLength: 12 }) }, FORM)

/** The audit log's older page: entries before this sequence number. */
export const AuditQuery = Type.Object({ before: Type.Optional(Type.Integer({ minimum: 1 })) })
