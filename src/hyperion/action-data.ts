/**
 * `act.data` as Hyperion returns it. Hyperion's indexer projects some actions into extra fields (`@transfer`,
 * `@newaccount`…) and its API merges them back into the decoded data at read time, the raw decoded fields winning
 * on a conflict. Wallets and explorers written against Hyperion read those extra fields (`act.data.amount`,
 * `act.data.symbol`, `act.data.newact`), so Antler adds them the same way (docs/HYPERION.md, get_actions):
 *
 * - any contract's `transfer` whose `quantity` (or `value`) is an asset string: `amount` (float) and `symbol` (code);
 * - `eosio::newaccount`: the ABI's field `name` renamed `newact`;
 * - `eosio::delegatebw` / `undelegatebw`: the stake assets replaced by floats, plus `amount` (their sum);
 * - `eosio::buyram`: `quant` as a float;
 * - `eosio::updateauth`: empty `auth.accounts`, `auth.keys` and `auth.waits` arrays deleted.
 */

/** Strings in `act.data` longer than this are cut with `noBinary=true` (Hyperion's rule)… */
export const NO_BINARY_MAX_LENGTH = 256
/** …to their first this many characters, followed by `...`. */
export const NO_BINARY_KEPT = 32

/** An asset string (`1.0000 EOS`) as Hyperion projects it: its amount as a float and its symbol code. */
export function assetParts(asset: unknown): { amount: number; symbol: string } | undefined {
  if (typeof asset !== 'string') return undefined
  const match = /^(-?\d+(?:\.\d+)?) ([A-Z]{1,7})$/.exec(asset)
  return match ? { amount: Number.parseFloat(match[1]), symbol: match[2] } : undefined
}

type DataObject = Record<string, unknown>

const isObject = (value: unknown): value is DataObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The float of an asset field, or the field as it was when it is not an asset. */
function assetFloat(value: unknown): unknown {
  return assetParts(value)?.amount ?? value
}

/**
 * What each projection adds or changes; the raw decoded fields win on a conflict unless the projection replaces them.
 */
function project(account: string, name: string, data: DataObject): DataObject {
  if (name === 'transfer') {
    const parts = assetParts(data.quantity ?? data.value)
    return parts ? { amount: parts.amount, symbol: parts.symbol, ...data } : data
  }
  if (account !== 'eosio') return data
  switch (name) {
    case 'newaccount': {
      if (!('name' in data)) return data
      const { name: newact, ...rest } = data
      return { ...rest, newact }
    }
    case 'delegatebw':
    case 'undelegatebw': {
      const prefix = name === 'delegatebw' ? 'stake' : 'unstake'
      const cpu = assetParts(data[`${prefix}_cpu_quantity`])
      const net = assetParts(data[`${prefix}_net_quantity`])
      if (!cpu || !net) return data
      return {
        ...data,
        amount: cpu.amount + net.amount,
        [`${prefix}_cpu_quantity`]: cpu.amount,
        [`${prefix}_net_quantity`]: net.amount,
      }
    }
    case 'buyram':
      return { ...data, quant: assetFloat(data.quant) }
    case 'updateauth': {
      if (!isObject(data.auth)) return data
      const auth: DataObject = { ...data.auth }
      for (const key of ['accounts', 'keys', 'waits'])
        if (Array.isArray(auth[key]) && (auth[key] as unknown[]).length === 0) delete auth[key]
      return { ...data, auth }
    }
    default:
      return data
  }
}

/** Every string longer than NO_BINARY_MAX_LENGTH cut to its first NO_BINARY_KEPT characters and `...`. */
export function withoutBinary(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > NO_BINARY_MAX_LENGTH ? `${value.slice(0, NO_BINARY_KEPT)}...` : value
  // Decoded data is at most as deep as its ABI's types; the guard bounds a pathological one.
  if (depth > 64) return value
  if (Array.isArray(value)) return value.map((item) => withoutBinary(item, depth + 1))
  if (isObject(value)) {
    const out: DataObject = {}
    for (const [key, inner] of Object.entries(value)) out[key] = withoutBinary(inner, depth + 1)
    return out
  }
  return value
}

/**
 * `act.data` of one action as Hyperion answers it: `decoded` (the data decoded with the ABI in force at its block,
 * undefined when it could not be) with the projections above, or the data's hex when it could not be decoded.
 */
export function hyperionActionData(args: {
  account: string
  name: string
  decoded: unknown
  hex: string
  noBinary?: boolean
}): unknown {
  const data =
    args.decoded === undefined
      ? args.hex
      : isObject(args.decoded)
        ? project(args.account, args.name, args.decoded)
        : args.decoded
  return args.noBinary ? withoutBinary(data) : data
}
