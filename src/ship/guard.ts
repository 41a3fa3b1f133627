import { SHIP_ABI_TEXT } from './abi.ts'
import { ShipProtocolError } from './errors.ts'

/**
 * The protocol guard: before any block is requested, the SHiP ABI a node sends is compared with
 * the layouts Antler's hand-written decoders assume (codec.ts for the envelope, fast-decode.ts for
 * traces, deltas and the rows the indexer keeps, normalize's header reader for blocks). Those
 * layouts are the Spring 1.x ABI bundled in ship-abi.json, which the decoders are tested against.
 *
 * Every type reachable from what is read by hand is compared, struct by struct and variant by
 * variant. Older nodes pass (a variant may have fewer alternatives, e.g. EOSIO 2.0's
 * `action_trace` without `action_trace_v1`; a struct may lack trailing binary extensions, e.g.
 * `get_status_result_v0.chain_id$`). A new variant alternative (`action_trace_v2`), a changed
 * field or a renamed delta table stops the indexer with `ship_protocol_error` naming the types,
 * rather than failing mid-stream or misreading bytes. Types no decoder reads (`global_property`,
 * `chain_config`, `resource_usage`…) are not compared: their rows are never decoded, so a Spring 2.0
 * `chain_config_v2` changes nothing Antler stores.
 */

interface AbiJson {
  readonly types?: readonly { readonly new_type_name: string; readonly type: string }[]
  readonly structs?: readonly {
    readonly name: string
    readonly base?: string
    readonly fields: readonly { readonly name: string; readonly type: string }[]
  }[]
  readonly variants?: readonly { readonly name: string; readonly types: readonly string[] }[]
  readonly tables?: readonly { readonly name: string; readonly type: string }[]
}

type Def =
  | { kind: 'alias'; type: string }
  | { kind: 'struct'; base: string; fields: readonly { name: string; type: string }[] }
  | { kind: 'variant'; types: readonly string[] }

interface Index {
  readonly defs: Map<string, Def>
  readonly tables: Map<string, string>
}

const BUILTINS: ReadonlySet<string> = new Set(
  'bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 int128 uint128 varint32 varuint32 float32 float64 float128 time_point time_point_sec block_timestamp_type name bytes string checksum160 checksum256 checksum512 public_key signature symbol symbol_code asset extended_asset'.split(
    ' ',
  ),
)

/** Where the hand-written decoders start reading. */
const READ_BY_HAND = [
  'request',
  'result',
  'block_header',
  'transaction_trace',
  'table_delta',
  'contract_row',
  'account',
  'permission',
  'permission_link',
  'generated_transaction',
]
/** Spring-only layouts the decoders read when a node has them (older nodes never send them). */
const READ_WHEN_PRESENT = ['finality_extension', 'finality_data']
/** Variants whose newer alternatives are only sent when asked for (the request/result envelope). */
const OPEN_VARIANTS: ReadonlySet<string> = new Set(['request', 'result'])
/** Delta tables the indexer reads by name. */
const READ_TABLES = ['contract_row', 'account', 'permission', 'permission_link', 'generated_transaction']

function indexAbi(abi: AbiJson): Index {
  const defs = new Map<string, Def>()
  for (const t of abi.types ?? []) defs.set(t.new_type_name, { kind: 'alias', type: t.type })
  for (const s of abi.structs ?? []) defs.set(s.name, { kind: 'struct', base: s.base ?? '', fields: s.fields ?? [] })
  for (const v of abi.variants ?? []) defs.set(v.name, { kind: 'variant', types: v.types ?? [] })
  return { defs, tables: new Map((abi.tables ?? []).map((t) => [String(t.name), t.type])) }
}

const EXPECTED = indexAbi(JSON.parse(SHIP_ABI_TEXT) as AbiJson)

/** `foo[]`, `foo?`, `foo$` → `foo`. */
const bare = (type: string): string => type.replace(/(\[\]|\?|\$)+$/, '')

const describeStruct = (d: Extract<Def, { kind: 'struct' }>): string =>
  `${d.base ? `${d.base} + ` : ''}{${d.fields.map((f) => `${f.name}:${f.type}`).join(', ')}}`

/** A node's struct may lack the expected struct's trailing binary extensions; nothing else may differ. */
function sameStruct(node: Extract<Def, { kind: 'struct' }>, expected: Extract<Def, { kind: 'struct' }>): boolean {
  if (node.base !== expected.base || node.fields.length > expected.fields.length) return false
  for (let i = 0; i < expected.fields.length; i++) {
    const e = expected.fields[i]
    const n = node.fields[i] as { name: string; type: string } | undefined
    if (!n) return e.type.endsWith('$') && expected.fields.slice(i).every((f) => f.type.endsWith('$'))
    if (n.name !== e.name || n.type !== e.type) return false
  }
  return true
}

/**
 * Problems of a node's SHiP ABI (parsed JSON) against the decoders' layouts, one line each, and the
 * types they name; empty when Antler can read everything it needs.
 */
export function shipAbiProblems(abi: unknown): { problems: string[]; types: string[] } {
  const node = indexAbi((abi ?? {}) as AbiJson)
  const problems: string[] = []
  const types = new Set<string>()
  const problem = (type: string, text: string) => {
    types.add(type)
    problems.push(`${type}: ${text}`)
  }
  const seen = new Set<string>()
  const visit = (raw: string, from: string): void => {
    const name = bare(raw)
    if (seen.has(name) || BUILTINS.has(name)) return
    seen.add(name)
    const mine = node.defs.get(name)
    const expected = EXPECTED.defs.get(name)
    if (!mine) return problem(name, `used by ${from} but not defined`)
    if (!expected) return problem(name, `unknown type (used by ${from}); the decoders know no layout for it`)
    if (mine.kind !== expected.kind) return problem(name, `a ${mine.kind}, the decoders read a ${expected.kind}`)
    if (mine.kind === 'alias' && expected.kind === 'alias') {
      if (mine.type !== expected.type)
        return problem(name, `an alias of ${mine.type}, the decoders read ${expected.type}`)
      return visit(mine.type, name)
    }
    if (mine.kind === 'struct' && expected.kind === 'struct') {
      if (!sameStruct(mine, expected))
        return problem(name, `fields ${describeStruct(mine)}, the decoders read ${describeStruct(expected)}`)
      if (mine.base) visit(mine.base, name)
      for (const f of mine.fields) visit(f.type, name)
      return
    }
    if (mine.kind === 'variant' && expected.kind === 'variant') {
      mine.types.forEach((alternative, i) => {
        const known = expected.types[i]
        if (known === undefined) {
          if (!OPEN_VARIANTS.has(name))
            problem(
              alternative,
              `unknown variant: alternative ${i} of ${name} (the decoders read ${expected.types.join(', ')})`,
            )
        } else if (known !== alternative)
          problem(alternative, `alternative ${i} of ${name}, where the decoders read ${known}`)
        else visit(alternative, name)
      })
    }
  }
  for (const root of READ_BY_HAND) visit(root, 'the decoders')
  for (const root of READ_WHEN_PRESENT) if (node.defs.has(root)) visit(root, 'the decoders')
  // The header is read from the start of a signed_block: it must derive from block_header.
  const chain: string[] = []
  for (let at = node.defs.get('signed_block'); at?.kind === 'struct' && at.base; at = node.defs.get(at.base))
    chain.push(at.base)
  if (node.defs.has('signed_block') && !chain.includes('block_header'))
    problem('signed_block', 'does not derive from block_header')
  for (const table of READ_TABLES) {
    const type = node.tables.get(table)
    if (type !== EXPECTED.tables.get(table))
      problem(
        table,
        type === undefined
          ? "delta table missing from the ABI's tables"
          : `delta table of type ${type}, the decoders read ${EXPECTED.tables.get(table)}`,
      )
  }
  return { problems, types: [...types] }
}

/** Throws `ship_protocol_error` naming the types when the node's SHiP ABI has layouts the decoders do not read. */
export function checkShipAbi(abi: unknown): void {
  const { problems, types } = shipAbiProblems(abi)
  if (problems.length === 0) return
  throw ShipProtocolError(
    `the node's SHiP ABI differs from the layouts Antler decodes (${types.join(', ')}): ${problems.join('; ')}. Nothing was written; use a node whose state-history protocol this build supports (Leap 3-5, Spring 1.x)`,
    undefined,
    { types },
  )
}
