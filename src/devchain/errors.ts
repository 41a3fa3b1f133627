/**
 * A nodeos chain exception: its numeric code, name and `what`, answered with the HTTP status
 * nodeos's http_plugin gives its class (401 unsatisfied authorization, 409 duplicate, 400 unknown
 * block or bad request, 422 truncated input, 500 otherwise).
 *
 * Not an AntlerError, on purpose: the devchain imitates nodeos, so its errors are nodeos's family
 * (numeric code + exception name, sent as nodeos's error body by `nodeosErrorBody`), never the API's
 * error object, and their names are nodeos's, not registry codes. `CHAIN_EXCEPTIONS` is their
 * registry; docs/ERRORS.md lists it in its own table.
 */
export class ChainError extends Error {
  readonly chainCode: number
  readonly chainName: string
  readonly what: string
  /** The HTTP status nodeos answers this exception with. */
  readonly status: number
  /** The `method` of nodeos's `details[0]` (where nodeos raised it). */
  readonly method: string

  constructor(args: {
    chainCode: number
    chainName: string
    what: string
    message: string
    status?: number
    method?: string
  }) {
    super(args.message)
    this.name = 'ChainError'
    this.chainCode = args.chainCode
    this.chainName = args.chainName
    this.what = args.what
    this.status = args.status ?? 500
    this.method = args.method ?? 'apply'
  }
}

/** The nodeos HTTP error body: `{code, message, error{code, name, what, details[]}}`. */
export interface NodeosErrorBody {
  code: number
  message: string
  error: {
    code: number
    name: string
    what: string
    details: { message: string; file: string; line_number: number; method: string }[]
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'UnAuthorized',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  500: 'Internal Service Error',
}

export function nodeosErrorBody(error: ChainError): NodeosErrorBody {
  return {
    code: error.status,
    message: STATUS_TEXT[error.status] ?? 'Internal Service Error',
    error: {
      code: error.chainCode,
      name: error.chainName,
      what: error.what,
      details: [{ message: error.message, file: 'devchain', line_number: 0, method: error.method }],
    },
  }
}

/** One nodeos exception: numeric code, name and `what` as in nodeos's chain/exceptions.hpp, and its HTTP status. */
export interface ChainException {
  readonly chainCode: number
  readonly chainName: string
  readonly what: string
  readonly status: number
}

const make = (chainCode: number, chainName: string, what: string, status = 500): ChainException => ({
  chainCode,
  chainName,
  what,
  status,
})

/** The chain exceptions the devchain declares, named as in nodeos's chain/exceptions.hpp. */
export const CHAIN_EXCEPTIONS = {
  assertMessage: make(3050003, 'eosio_assert_message_exception', 'eosio_assert_message assertion failure'),
  actionValidate: make(3050000, 'action_validate_exception', 'Action validate exception'),
  accountNameExists: make(3050001, 'account_name_exists_exception', 'Account name already exists'),
  invalidActionArgs: make(3050002, 'invalid_action_args_exception', 'Invalid Action Arguments'),
  actionNotFound: make(3050005, 'action_not_found_exception', 'Action can not be found'),
  transaction: make(3040000, 'transaction_exception', 'Transaction exception'),
  txNoAction: make(3040002, 'tx_no_action', 'Transaction should have at least one normal action'),
  expiredTx: make(3040005, 'expired_tx_exception', 'Expired Transaction'),
  txExpTooFar: make(3040006, 'tx_exp_too_far_exception', 'Transaction Expiration Too Far'),
  invalidRefBlock: make(3040007, 'invalid_ref_block_exception', 'Invalid Reference Block'),
  txDuplicate: make(3040008, 'tx_duplicate', 'Duplicate transaction', 409),
  txDuplicateSig: make(3090001, 'tx_duplicate_sig', 'Duplicate signature included'),
  txIrrelevantSig: make(3090002, 'tx_irrelevant_sig', 'Irrelevant signature included'),
  unsatisfiedAuthorization: make(
    3090003,
    'unsatisfied_authorization',
    'Provided keys, permissions, and delays do not satisfy declared authorizations',
    401,
  ),
  missingAuth: make(3090004, 'missing_auth_exception', 'Missing required authority'),
  irrelevantAuth: make(3090005, 'irrelevant_auth_exception', 'Irrelevant authority included'),
  invalidPermission: make(3090007, 'invalid_permission', 'Invalid Permission'),
  transactionType: make(3010006, 'transaction_type_exception', 'Invalid transaction', 400),
  packedTransactionType: make(3010010, 'packed_transaction_type_exception', 'Invalid packed transaction', 400),
  signatureType: make(3010012, 'signature_type_exception', 'Invalid signature', 400),
  nameType: make(3010001, 'name_type_exception', 'Invalid name', 400),
  txTooBig: make(
    3080006,
    'tx_net_usage_exceeded',
    'Transaction exceeded the current network usage limit imposed on the transaction',
  ),
  unpack: make(3015013, 'unpack_exception', 'Unpack data exception'),
  unknownBlock: make(3100002, 'unknown_block_exception', 'Unknown block', 400),
  accountQuery: make(3060002, 'account_query_exception', 'Account Query Exception', 400),
  contractTableQuery: make(3060003, 'contract_table_query_exception', 'Contract Table Query Exception', 400),
  abiNotFound: make(3015000, 'abi_not_found_exception', 'No ABI found', 400),
  badRequest: make(3200006, 'invalid_http_request', 'invalid http request', 400),
  parse: make(4, 'parse_error_exception', 'Parse Error', 400),
  payloadTooLarge: make(3200006, 'invalid_http_request', 'invalid http request', 413),
  truncated: make(3, 'eof_exception', 'End Of File', 422),
  notFound: make(3200005, 'resource_not_found', 'Resource not found', 404),
  deferredTxDuplicate: make(3040009, 'deferred_tx_duplicate', 'Duplicate deferred transaction'),
  unknownTransaction: make(3040011, 'tx_not_found', 'The transaction can not be found'),
  ramUsageExceeded: make(3080001, 'ram_usage_exceeded', 'Account using more than allotted RAM usage'),
  /** An unexpected failure inside the devchain (the chain API's last-resort answer). */
  internal: make(0, 'exception', 'unspecified'),
} as const satisfies Record<string, ChainException>

/** A ChainError of each exception, by the same names: `throw chainErrors.txDuplicate('…')`. */
export const chainErrors = Object.fromEntries(
  Object.entries(CHAIN_EXCEPTIONS).map(([key, exception]) => [
    key,
    (message: string) => new ChainError({ ...exception, message }),
  ]),
) as { readonly [K in keyof typeof CHAIN_EXCEPTIONS]: (message: string) => ChainError }

/** Contract-side `check(cond, msg)`: fails the transaction with nodeos's assertion wording. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw chainErrors.assertMessage(`assertion failure with message: ${message}`)
}
