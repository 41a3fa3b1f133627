import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomInt } from 'node:crypto'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { ABI, Name, Serializer, UInt64 } from '@wharfkit/antelope'
import { pino } from 'pino'
import { DEFAULT_AUTH_LIMITS } from '../../src/auth/index.ts'
import { startApi } from '../../src/cli/api-runtime.ts'
import { DEFAULT_WEBHOOK_FLAGS } from '../../src/cli/webhook-options.ts'
import { pushSigned, RAWDB_ABI, type Chain } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openSqliteStore, type Store } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import {
  abiFromHex,
  readCanonicalChain,
  referenceDecode,
  referenceKey,
  StateReplay,
  type ChainBlock,
  type ModelRow,
} from './chain-replay.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

/*
 * A randomized differential test of the REST state endpoints. A devchain runs a seeded workload
 * (token transfers, rawdb puts and erases of random bytes on several scopes, tables and keys, four
 * setabi that change the rows' layouts) with random forks; the indexer follows it into SQLite and
 * the API serves that file through its own read-only connection. The expected answers come from
 * the chain alone: blocks 1..head read back over SHiP and their contract_row and account deltas
 * replayed into a map, rows decoded with wharfkit against the ABI in force at each height.
 *
 * ANTLER_TEST_SEED=<n> replays a run; the seed is printed as a diagnostic and in every failure.
 */

const SEED =
  process.env.ANTLER_TEST_SEED !== undefined ? Number(process.env.ANTLER_TEST_SEED) >>> 0 : randomInt(2 ** 31)
/** Blocks of workload produced before the indexer starts (it then catches up in batches), and after. */
const BLOCKS_BEFORE_INDEXER = 150
const BLOCKS_WHILE_INDEXING = 150
const MAX_FORK_DEPTH = 6
const TABLE_PICKS = 220
const SCOPES_PICKS = 50
const TABLE_SCOPES_PICKS = 50

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const trxId = (packedTrx: Uint8Array) => createHash('sha256').update(packedTrx).digest('hex')

// ---------------------------------------------------------------------------------------------
// rawdb's ABIs over time: the same table names with other row layouts, a table dropped and back.

type Fields = { name: string; type: string }[]
interface AbiVersion {
  readonly structs: Record<string, Fields>
  readonly tables: Record<string, string>
  readonly types?: { new_type_name: string; type: string }[]
  readonly variants?: { name: string; types: string[] }[]
}
const f = (spec: string): Fields => spec.split(',').map((p) => ({ name: p.split(':')[0], type: p.split(':')[1] }))
const NOTE = f('n:uint32,tags:string[]')
const ABI_VERSIONS: readonly AbiVersion[] = [
  { structs: { item: f('id:uint64,label:string'), note: NOTE }, tables: { items: 'item', notes: 'note' } },
  {
    structs: { item: f('id:uint64,amount:uint32,flag:uint8'), note: NOTE, blob: f('data:bytes') },
    tables: { items: 'item', notes: 'note', blobs: 'blob' },
  },
  {
    structs: { item: f('id:uint64,label:string,extra:uint8$'), blob: f('data:bytes') },
    tables: { items: 'item', blobs: 'blob' },
  },
  {
    types: [{ new_type_name: 'label_t', type: 'string' }],
    variants: [{ name: 'kind', types: ['uint8', 'string'] }],
    structs: {
      item: f('id:uint64,label:label_t?,qty:asset'),
      note: f('n:uint32,tags:string[],k:kind'),
      blob: f('data:bytes,more:varuint32$'),
    },
    tables: { items: 'item', notes: 'note', blobs: 'blob' },
  },
]

/** rawdb's own actions plus a version's tables, as wharfkit's ABI (setabi replaces the whole ABI). */
function rawdbAbi(v: AbiVersion): ABI {
  const own = JSON.parse(JSON.stringify(RAWDB_ABI)) as ABI.Def
  return ABI.from({
    ...own,
    types: v.types ?? [],
    variants: v.variants ?? [],
    structs: [...own.structs, ...Object.entries(v.structs).map(([name, fields]) => ({ name, base: '', fields }))],
    tables: Object.entries(v.tables).map(([name, type]) => ({
      name,
      type,
      index_type: 'i64',
      key_names: [],
      key_types: [],
    })),
  })
}
const RAWDB_ABIS = ABI_VERSIONS.map(rawdbAbi)

// ---------------------------------------------------------------------------------------------
// The workload.

const USERS = ['alice', 'bob', 'carol'] as const
const PAYERS = ['rawdb', 'alice', 'bob', 'carol'] as const
const RAW_SCOPES: Record<string, readonly string[]> = {
  items: ['alice', 'bob', 'carol', 'rawdb'],
  notes: ['alice', 'zeta'],
  blobs: ['alice', 'bob', 'carol', 'rawdb', 'zeta', 'eosio'],
}
const RAW_KEYS: Record<string, readonly bigint[]> = {
  items: [0n, 1n, 2n, 3n, 4n, 2n ** 63n, 2n ** 64n - 1n],
  notes: [1n, 2n],
  blobs: [0n, 7n, 5459781n, 1397703940n, 2n ** 64n - 1n],
}
/** The `stat` scope of EOS: the symbol code as a uint64, rendered as a name. */
const EOS_SCOPE = Name.from(UInt64.from(0x534f45)).toString()

class Workload {
  readonly forks: { forkBlockNum: number; depth: number; dropped: number }[] = []
  private nonce = 0
  private readonly protectedTrx = new Set<string>()
  private lastFork = 0

  constructor(
    private readonly chain: Chain,
    private readonly rand: () => number,
  ) {}

  private int(n: number): number {
    return Math.floor(this.rand() * n)
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]
  }

  private text(): string {
    const alphabet = ['a', 'b', 'z', ' ', '0', 'é', '€', '😀', '\u0000']
    return Array.from({ length: this.int(6) }, () => this.pick(alphabet)).join('')
  }

  private bytes(n: number): string {
    return Array.from({ length: n }, () => this.int(256).toString(16).padStart(2, '0')).join('')
  }

  /** A random object of a table's struct in ABI version `v` (undefined: the version has no such table). */
  private rowObject(v: number, table: string): Record<string, unknown> | undefined {
    const type = ABI_VERSIONS[v].tables[table]
    if (!type) return undefined
    const u64 = () =>
      this.rand() < 0.5
        ? String(this.int(1000))
        : (BigInt(this.int(2 ** 31)) * BigInt(this.int(2 ** 31)) * 3n).toString()
    const tags = () => Array.from({ length: this.int(3) }, () => this.text())
    const key = `${table}@${v}`
    switch (key) {
      case 'items@0':
        return { id: u64(), label: this.text() }
      case 'items@1':
        return { id: u64(), amount: this.int(2 ** 32), flag: this.int(256) }
      case 'items@2':
        return this.rand() < 0.5
          ? { id: u64(), label: this.text() }
          : { id: u64(), label: this.text(), extra: this.int(256) }
      case 'items@3':
        return {
          id: u64(),
          label: this.rand() < 0.3 ? null : this.text(),
          qty: `${(this.int(10_000_000) / 10_000).toFixed(4)} EOS`,
        }
      case 'notes@3':
        return {
          n: this.int(2 ** 32),
          tags: tags(),
          k: this.rand() < 0.5 ? ['uint8', this.int(256)] : ['string', this.text()],
        }
      case 'blobs@3':
        return this.rand() < 0.5
          ? { data: this.bytes(this.int(6)) }
          : { data: this.bytes(this.int(6)), more: this.int(2 ** 20) }
      default:
        return table === 'notes' ? { n: this.int(2 ** 32), tags: tags() } : { data: this.bytes(this.int(6)) }
    }
  }

  /** Row bytes: valid for the current layout or an older/newer one, with a byte too many, invalid UTF-8, or random. */
  private value(table: string, current: number): string {
    const r = this.rand()
    if (r < 0.15) return this.bytes(this.int(20))
    if (r < 0.2 && table === 'items') return `${'01'.padEnd(16, '0')}03ff41fe` // id 1, a 3-byte label that is not UTF-8
    const v = r < 0.65 && current >= 0 ? current : this.int(ABI_VERSIONS.length)
    const object = this.rowObject(v, table)
    if (!object) return this.bytes(this.int(12))
    const hex = Buffer.from(
      Serializer.encode({ abi: RAWDB_ABIS[v], type: ABI_VERSIONS[v].tables[table], object }).array,
    ).toString('hex')
    return r > 0.95 ? `${hex}00` : hex
  }

  private push(actions: Parameters<typeof pushSigned>[1]): boolean {
    try {
      pushSigned(this.chain, actions, { nonce: ++this.nonce })
      return true
    } catch {
      return false // refused (overdrawn balance, a row another transaction erased): nothing changes
    }
  }

  private rawRows(scope: string, table: string) {
    return this.chain.state.contractRowKeys('rawdb', scope, table).map((k) => this.chain.state.get('contract_row', k)!)
  }

  private put(current: number): void {
    const table = this.pick(Object.keys(RAW_SCOPES))
    const scope = this.pick(RAW_SCOPES[table])
    const payer = this.pick(PAYERS)
    const key = this.pick(RAW_KEYS[table])
    this.push([
      {
        account: 'rawdb',
        name: 'put',
        authorization: [{ actor: payer, permission: 'active' }],
        data: { scope, table, key: key.toString(), payer, value: this.value(table, current) },
      },
    ])
  }

  private erase(): void {
    const table = this.pick(Object.keys(RAW_SCOPES))
    const scope = this.pick(RAW_SCOPES[table])
    const rows = this.rawRows(scope, table)
    if (rows.length === 0) return
    const row = this.pick(rows)
    this.push([
      {
        account: 'rawdb',
        name: 'erase',
        authorization: [{ actor: row.payer, permission: 'active' }],
        data: { scope, table, key: row.primaryKey.toString() },
      },
    ])
  }

  /** A row written and erased by one transaction: no delta at all. */
  private putAndErase(): void {
    const key = (BigInt(this.int(2 ** 30)) + 1000n).toString()
    this.push([
      {
        account: 'rawdb',
        name: 'put',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { scope: 'alice', table: 'items', key, payer: 'rawdb', value: this.bytes(4) },
      },
      {
        account: 'rawdb',
        name: 'erase',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { scope: 'alice', table: 'items', key },
      },
    ])
  }

  private transfer(): void {
    const from = this.pick(USERS)
    const to = this.rand() < 0.15 ? 'rawdb' : this.pick(USERS.filter((u) => u !== from))
    const quantity = `${((1 + this.int(20_000)) / 10_000).toFixed(4)} EOS`
    this.push([
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: from, permission: 'active' }],
        data: { from, to, quantity, memo: this.text() },
      },
    ])
  }

  /** rawdb gives its whole balance away and closes its row (the scope empties), or opens it again with alice paying. */
  private rawdbBalance(): void {
    const keys = this.chain.state.contractRowKeys('eosio.token', 'rawdb', 'accounts')
    const auth = [{ actor: 'rawdb', permission: 'active' }]
    if (keys.length === 0) {
      this.push([
        {
          account: 'eosio.token',
          name: 'open',
          authorization: [{ actor: 'alice', permission: 'active' }],
          data: { owner: 'rawdb', symbol: '4,EOS', ram_payer: 'alice' },
        },
      ])
      return
    }
    const amount = Buffer.from(this.chain.state.get('contract_row', keys[0])!.value).readBigInt64LE(0)
    const close = {
      account: 'eosio.token',
      name: 'close',
      authorization: auth,
      data: { owner: 'rawdb', symbol: '4,EOS' },
    }
    if (amount === 0n) this.push([close])
    else
      this.push([
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: auth,
          data: { from: 'rawdb', to: 'alice', quantity: `${(Number(amount) / 10_000).toFixed(4)} EOS`, memo: 'empty' },
        },
        close,
      ])
  }

  setAbi(version: number): void {
    const abi = Buffer.from(Serializer.encode({ object: RAWDB_ABIS[version] }).array).toString('hex')
    this.push([
      {
        account: 'eosio',
        name: 'setabi',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { account: 'rawdb', abi },
      },
    ])
  }

  /**
   * One block: a few transactions, then the block; `setAbiVersion` first when one is due. A fork
   * never drops that block's transactions, so every layout change reaches the chain.
   */
  block(current: number, setAbiVersion: number | undefined): void {
    if (setAbiVersion !== undefined) this.setAbi(setAbiVersion)
    const count = this.int(4)
    for (let i = 0; i < count; i++) {
      const r = this.rand()
      if (r < 0.33) this.transfer()
      else if (r < 0.73) this.put(current)
      else if (r < 0.94) this.erase()
      else if (r < 0.97) this.putAndErase()
      else this.rawdbBalance()
    }
    const block = this.chain.produceBlock()
    if (setAbiVersion !== undefined)
      for (const input of block.inputs) this.protectedTrx.add(trxId(input.packed.packedTrx))
  }

  /**
   * Forks with probability `rate` (always after 30 blocks without one), at a random depth up to MAX_FORK_DEPTH,
   * sometimes dropping transactions.
   */
  async maybeFork(rate: number, beforeFork: () => Promise<void>): Promise<void> {
    const reversible = this.chain.head.num - this.chain.lib.blockNum
    const due = this.chain.head.num - this.lastFork >= 30
    if (reversible < 1 || (!due && this.rand() >= rate)) return
    const depth = 1 + this.int(Math.min(MAX_FORK_DEPTH, reversible))
    await beforeFork()
    const drop: string[] = []
    if (this.rand() < 0.4) {
      for (let n = this.chain.head.num - depth + 1; n <= this.chain.head.num; n++) {
        for (const input of this.chain.block(n)!.inputs) {
          const id = trxId(input.packed.packedTrx)
          if (!this.protectedTrx.has(id) && this.rand() < 0.3) drop.push(id)
        }
      }
    }
    const result = this.chain.fork(depth, drop)
    this.forks.push({ forkBlockNum: result.fork_block_num, depth, dropped: drop.length })
    this.lastFork = this.chain.head.num
  }
}

// ---------------------------------------------------------------------------------------------
// Picks and their expected answers.

interface Target {
  readonly code: string
  readonly table: string
  readonly scopes: readonly string[]
}
const TARGETS: readonly Target[] = [
  { code: 'eosio.token', table: 'accounts', scopes: ['alice', 'bob', 'carol', 'eosio', 'rawdb', 'zzz'] },
  { code: 'eosio.token', table: 'stat', scopes: [EOS_SCOPE, 'alice'] },
  { code: 'rawdb', table: 'items', scopes: [...RAW_SCOPES.items, 'ghost'] },
  { code: 'rawdb', table: 'notes', scopes: [...RAW_SCOPES.notes, 'ghost'] },
  { code: 'rawdb', table: 'blobs', scopes: [...RAW_SCOPES.blobs, 'ghost'] },
  { code: 'rawdb', table: 'never', scopes: ['alice'] },
]

type Expected = { status: 200; body: unknown } | { status: 400; code: string }
interface Check {
  readonly label: string
  readonly height: number
  readonly path: string
  readonly query: Record<string, string>
  readonly expected: (replay: StateReplay) => Expected
}
interface ResolvedCheck extends Omit<Check, 'expected'> {
  readonly expected: Expected
}

type KeyType = 'uint64' | 'hex' | 'name'

/** The chain's position when the comparison runs: header fields of every state answer. */
interface Frame {
  readonly head: number
  readonly lib: number
  readonly blockId: (num: number) => string
}

const header = (frame: Frame, h: number) => ({
  last_irreversible_block_id: frame.blockId(frame.lib),
  last_irreversible_block_num: frame.lib,
  ...(h > frame.lib ? { up_to_block_id: frame.blockId(h), up_to_block_num: h } : {}),
})

/** A decode failure's `error`: the spec's prefix exactly; the decoder's own message is not compared. */
const ERROR_PREFIX = /^(ABI from block \d+, row struct "[^"]*", err: ).*$/s
const errorText = (setAt: number, type: string) => `ABI from block ${setAt}, row struct "${type}", err: …`

function expectedRows(
  replay: StateReplay,
  abis: Map<string, ABI>,
  args: { code: string; table: string; scope: string; json: boolean; keyType: KeyType; withBlock: boolean },
): { rows: unknown[] } | { error: string } {
  const rows = replay.rows(args.code, args.table, args.scope)
  const base = (r: ModelRow) => ({
    key: referenceKey(r.primaryKey, args.keyType),
    ...(r.payer !== '' ? { payer: r.payer } : {}),
    ...(args.withBlock ? { block: r.block } : {}),
  })
  if (!args.json) return { rows: rows.map((r) => ({ ...base(r), hex: r.value })) }
  const abiHex = replay.abi(args.code)
  if (!abiHex) return { error: 'data_abi_not_found_error' }
  const abi = abiFromHex(abis, abiHex.abi)
  const type = abi.tables.find((t) => t.name.toString() === args.table)?.type
  if (type === undefined) return { error: 'data_table_not_found_error' }
  return {
    rows: rows.map((r) => {
      const decoded = referenceDecode(abi, type, r.value)
      return decoded.ok
        ? { ...base(r), json: decoded.value }
        : { ...base(r), hex: r.value, error: errorText(abiHex.block, type) }
    }),
  }
}

/** Interesting heights found by a first replay: ABI changes, first rows of tables, scopes emptied, fork points. */
function interestingHeights(blocks: readonly ChainBlock[], forkPoints: readonly number[]) {
  const replay = new StateReplay()
  const abiChanges: number[] = []
  const firstRow = new Map<string, number>()
  const emptied: { code: string; table: string; scope: string; height: number }[] = []
  for (const block of blocks) {
    const before = new Map(
      block.rows.map((d) => [`${d.code}|${d.table}|${d.scope}`, replay.rows(d.code, d.table, d.scope).length]),
    )
    replay.apply(block)
    if (block.abis.some((a) => a.account === 'rawdb')) abiChanges.push(block.num)
    for (const d of block.rows)
      if (!firstRow.has(`${d.code}|${d.table}`)) firstRow.set(`${d.code}|${d.table}`, block.num)
    for (const [key, count] of before) {
      const [code, table, scope] = key.split('|')
      if (count > 0 && replay.rows(code, table, scope).length === 0)
        emptied.push({ code, table, scope, height: block.num })
    }
  }
  const heights = new Set<number>([1, 2, 3])
  for (const h of abiChanges) for (const d of [-1, 0, 1]) heights.add(h + d)
  for (const h of firstRow.values()) for (const d of [-1, 0]) heights.add(h + d)
  for (const h of forkPoints) for (const d of [-1, 0, 1]) heights.add(h + d)
  return { abiChanges, firstRow, emptied, heights: [...heights].filter((h) => h >= 1 && h <= blocks.length) }
}

function makeChecks(
  rand: () => number,
  frame: Frame,
  abis: Map<string, ABI>,
  interesting: ReturnType<typeof interestingHeights>,
): Check[] {
  const int = (n: number) => Math.floor(rand() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]
  const height = (): number => {
    const r = rand()
    if (r < 0.35) return pick(interesting.heights)
    if (r < 0.65) return 1 + int(frame.head)
    if (r < 0.9) return frame.lib + 1 + int(frame.head - frame.lib)
    return frame.head
  }
  const scopeParam = (scope: string) => (scope === EOS_SCOPE && rand() < 0.5 ? 'EOS' : scope)
  /** block_num, and sometimes irreversible_only; the error expected when it refuses. */
  const heightParams = (h: number): { query: Record<string, string>; refusal?: string } => {
    const query: Record<string, string> =
      h === frame.head && rand() < 0.5 ? (rand() < 0.5 ? {} : { block_num: '0' }) : { block_num: String(h) }
    if (h <= frame.lib && rand() < 0.2) return { query: { ...query, irreversible_only: 'true' } }
    if (h > frame.lib && 'block_num' in query && query.block_num !== '0' && rand() < 0.08)
      return { query: { ...query, irreversible_only: 'true' }, refusal: 'app_block_num_higher_than_lib_error' }
    return { query }
  }

  const checks: Check[] = []
  const tableCheck = (target: Target, scope: string, h: number, json: boolean) => {
    const keyType = pick<KeyType>(['uint64', 'uint64', 'uint64', 'hex', 'name'])
    const withBlock = json ? rand() < 0.5 : rand() < 0.85
    const { query, refusal } = heightParams(h)
    checks.push({
      label: `table ${target.code}/${target.table}/${scope} at ${h} json=${json}`,
      height: h,
      path: '/v0/state/table',
      query: {
        account: target.code,
        table: target.table,
        scope: scopeParam(scope),
        json: String(json),
        key_type: keyType,
        with_block_num: String(withBlock),
        ...query,
      },
      expected: (replay) => {
        if (refusal) return { status: 400, code: refusal }
        const answer = expectedRows(replay, abis, {
          code: target.code,
          table: target.table,
          scope,
          json,
          keyType,
          withBlock,
        })
        return 'error' in answer
          ? { status: 400, code: answer.error }
          : { status: 200, body: { ...header(frame, h), rows: answer.rows } }
      },
    })
  }

  for (let i = 0; i < TABLE_PICKS; i++) {
    let target = pick(TARGETS)
    let scope = pick(target.scopes)
    let h = height()
    const r = rand()
    if (r < 0.15 && interesting.emptied.length > 0) {
      // A scope around the block that emptied it.
      const e = pick(interesting.emptied)
      target = TARGETS.find((t) => t.code === e.code && t.table === e.table) ?? {
        code: e.code,
        table: e.table,
        scopes: [e.scope],
      }
      scope = e.scope
      h = Math.max(1, e.height - int(2))
    } else if (r < 0.25) {
      // Around the first row of the table (before it existed, and the block that created it).
      const first = interesting.firstRow.get(`${target.code}|${target.table}`)
      if (first !== undefined) h = Math.max(1, first - int(2))
    }
    tableCheck(target, scope, h, false)
    tableCheck(target, scope, h, true)
  }

  for (let i = 0; i < SCOPES_PICKS; i++) {
    const target = pick(TARGETS)
    const h = height()
    const scopes = target.scopes.filter(() => rand() < 0.6)
    if (scopes.length === 0) scopes.push(pick(target.scopes))
    const json = rand() < 0.5
    const keyType = pick<KeyType>(['uint64', 'hex', 'name'])
    const withBlock = rand() < 0.7
    const { query, refusal } = heightParams(h)
    checks.push({
      label: `tables/scopes ${target.code}/${target.table}/[${scopes.join(',')}] at ${h} json=${json}`,
      height: h,
      path: '/v0/state/tables/scopes',
      query: {
        account: target.code,
        table: target.table,
        scopes: scopes.map(scopeParam).join('|'),
        json: String(json),
        key_type: keyType,
        with_block_num: String(withBlock),
        ...query,
      },
      expected: (replay) => {
        if (refusal) return { status: 400, code: refusal }
        const tables: unknown[] = []
        for (const scope of [...scopes].sort()) {
          const answer = expectedRows(replay, abis, {
            code: target.code,
            table: target.table,
            scope,
            json,
            keyType,
            withBlock,
          })
          if ('error' in answer) return { status: 400, code: answer.error }
          tables.push({ account: target.code, scope, rows: answer.rows })
        }
        return { status: 200, body: { ...header(frame, h), tables } }
      },
    })
  }

  for (let i = 0; i < TABLE_SCOPES_PICKS; i++) {
    const target = pick(TARGETS)
    const h =
      rand() < 0.3 && interesting.emptied.length > 0 ? Math.max(1, pick(interesting.emptied).height - int(2)) : height()
    const query: Record<string, string> = h === frame.head && rand() < 0.5 ? {} : { block_num: String(h) }
    checks.push({
      label: `table_scopes ${target.code}/${target.table} at ${h}`,
      height: h,
      path: '/v0/state/table_scopes',
      query: { account: target.code, table: target.table, ...query },
      expected: (replay) => {
        const scopes = replay.scopes(target.code, target.table)
        return scopes.length === 0
          ? { status: 400, code: 'data_table_not_found_error' }
          : { status: 200, body: { block_num: h, scopes } }
      },
    })
  }

  checks.push({
    label: 'table above head',
    height: frame.head,
    path: '/v0/state/table',
    query: { account: 'rawdb', table: 'items', scope: 'alice', block_num: String(frame.head + 1) },
    expected: () => ({ status: 400, code: 'app_block_num_higher_than_head_block_error' }),
  })
  return checks
}

/** The answers at the checks' heights, from one replay of the chain. */
function resolveChecks(blocks: readonly ChainBlock[], checks: readonly Check[]): ResolvedCheck[] {
  const byHeight = new Map<number, Check[]>()
  for (const c of checks) byHeight.set(c.height, [...(byHeight.get(c.height) ?? []), c])
  const replay = new StateReplay()
  const resolved: ResolvedCheck[] = []
  for (const block of blocks) {
    replay.apply(block)
    for (const c of byHeight.get(block.num) ?? []) resolved.push({ ...c, expected: c.expected(replay) })
  }
  return resolved
}

/** A row's decode error reduced to the spec's prefix (the decoder's message is free text). */
function normalize(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(normalize)
  if (typeof body !== 'object' || body === null) return body
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(body))
    out[k] = k === 'error' && typeof v === 'string' ? v.replace(ERROR_PREFIX, '$1…') : k === 'json' ? v : normalize(v)
  return out
}

interface Mismatch {
  readonly label: string
  readonly url: string
  readonly expected: unknown
  readonly actual: unknown
}

async function runChecks(
  api: string,
  checks: readonly ResolvedCheck[],
  concurrency = 8,
): Promise<{ mismatches: Mismatch[]; stats: Record<string, number> }> {
  const mismatches: Mismatch[] = []
  const stats: Record<string, number> = { requests: 0, ok200: 0, rows: 0, jsonRows: 0, errorRows: 0, emptyAnswers: 0 }
  const tally = (body: unknown) => {
    const rows = ((body as { rows?: unknown[] }).rows ??
      (body as { tables?: { rows: unknown[] }[] }).tables?.flatMap((t) => t.rows) ??
      []) as Record<string, unknown>[]
    stats.rows += rows.length
    stats.jsonRows += rows.filter((r) => 'json' in r).length
    stats.errorRows += rows.filter((r) => 'error' in r).length
    if (rows.length === 0 && !('scopes' in (body as object))) stats.emptyAnswers++
  }
  let next = 0
  const worker = async () => {
    while (next < checks.length) {
      const check = checks[next++]
      const url = `${api}${check.path}?${new URLSearchParams(check.query)}`
      const response = await fetch(url)
      const body = (await response.json()) as Record<string, unknown>
      stats.requests++
      const e = check.expected
      const actual =
        e.status === 200
          ? { status: response.status, body: normalize(body) }
          : { status: response.status, code: body.code }
      const expected = e.status === 200 ? { status: 200, body: e.body } : e
      if (response.status === 200) {
        stats.ok200++
        tally(body)
      }
      try {
        assert.deepStrictEqual(actual, expected)
      } catch {
        mismatches.push({
          label: check.label,
          url: url.slice(api.length),
          expected,
          actual: e.status === 200 ? actual : { status: response.status, body },
        })
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { mismatches, stats }
}

// ---------------------------------------------------------------------------------------------

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (seed ${SEED})`)
    await sleep(5)
  }
}

/** The indexer into a SQLite file and the API on a real port reading it through its own read-only connection. */
async function startPlatform(t: TestContext, devchain: { ship: string; chainApi: string }) {
  const dir = tempDir(t, 'antler-state-diff-')
  const path = join(dir, 'store.sqlite')
  const store = openSqliteStore(path)
  let undone = 0
  const indexer = createIndexer({
    shipUrl: devchain.ship,
    store,
    reconnect: { minDelayMs: 20, maxDelayMs: 100 },
    onFork: (fork) => (undone += fork.undone),
  })
  const running = indexer.run().catch((error: unknown) => console.error('indexer stopped:', error))
  const apiStore: Store = openSqliteStore(path, { readOnly: true })
  const api = await startApi({
    flags: {
      port: 0,
      grpcPort: 0,
      auth: false,
      requireOrigin: false,
      tokenTtl: 3600,
      redis: undefined,
      openChainApi: true,
      rateLimits: DEFAULT_AUTH_LIMITS,
      trustProxy: false,
      hyperionToken: false,
      ...DEFAULT_WEBHOOK_FLAGS,
    },
    host: '127.0.0.1',
    store: apiStore,
    storeKind: 'sqlite',
    chainApi: devchain.chainApi,
    logger: pino({ level: 'error' }),
    storeReadOnly: true,
  })
  onCleanup(t, async () => {
    await api.close()
    await indexer.stop()
    await running
    await apiStore.close()
    await store.close()
  })
  return { store, api: api.api, undone: () => undone }
}

test(`REST state endpoints equal a replay of the chain's own deltas at random heights, across forks and ABI changes (seed ${SEED})`, async (t) => {
  const started = Date.now()
  t.diagnostic(`seed ${SEED} (replay with ANTLER_TEST_SEED=${SEED})`)
  const rand = mulberry32(SEED)
  const devchain = await withDevchain(t, { blockTimeMs: 0, libDepth: 12 })
  const chain = devchain.chain
  const workload = new Workload(chain, rand)
  const total = BLOCKS_BEFORE_INDEXER + BLOCKS_WHILE_INDEXING
  // Four setabi spread over the run, two before the indexer starts and two while it follows.
  const abiAt = new Map<number, number>(
    [0.05, 0.4, 0.6, 0.85].map((share, version) => [
      Math.floor(total * share) + Math.floor(rand() * total * 0.1),
      version,
    ]),
  )
  let current = -1

  for (let i = 0; i < BLOCKS_BEFORE_INDEXER; i++) {
    const version = abiAt.get(i)
    if (version !== undefined) current = version
    workload.block(current, version)
    await workload.maybeFork(0.06, async () => undefined)
  }

  const platform = await startPlatform(t, devchain)
  const caughtUp = async () => {
    const p = await platform.store.position()
    return p !== undefined && p.head.blockNum === chain.head.num && p.head.blockId === chain.head.id
  }
  for (let i = BLOCKS_BEFORE_INDEXER; i < total; i++) {
    const version = abiAt.get(i)
    if (version !== undefined) current = version
    workload.block(current, version)
    // Some forks come after the indexer wrote the blocks they replace, others before it read them.
    await workload.maybeFork(0.08, async () => {
      if (rand() < 0.6) await until(caughtUp, 'the store to reach the head before a fork')
    })
    await (rand() < 0.3 ? sleep(2) : new Promise((resolve) => setImmediate(resolve)))
  }

  // Quiet: no more forks; a few empty blocks, then the store holds exactly the chain's head and LIB.
  for (let i = 0; i < 3; i++) chain.produceBlock()
  await until(
    async () => (await caughtUp()) && (await platform.store.position())!.lib === chain.lib.blockNum,
    'the store to reach the chain head and LIB',
  )
  const frame: Frame = { head: chain.head.num, lib: chain.lib.blockNum, blockId: (n) => chain.blockIdAt(n)! }
  const workloadMs = Date.now() - started

  const blocks = await readCanonicalChain(devchain.ship, frame.head)
  for (const b of blocks) assert.equal(b.id, frame.blockId(b.num), `SHiP block ${b.num} is the canonical one`)
  const interesting = interestingHeights(
    blocks,
    workload.forks.map((f) => f.forkBlockNum),
  )
  const abis = new Map<string, ABI>()
  const checks = resolveChecks(blocks, makeChecks(rand, frame, abis, interesting))
  const { mismatches, stats } = await runChecks(platform.api, checks)

  t.diagnostic(
    `head ${frame.head}, LIB ${frame.lib}; ${workload.forks.length} forks ` +
      `(depths ${workload.forks.map((f) => f.depth).join(',')}; ${workload.forks.reduce((n, f) => n + f.dropped, 0)} transactions dropped), ` +
      `${platform.undone()} stored blocks undone by the indexer; rawdb ABI changes at ${interesting.abiChanges.join(',')}; ${interesting.emptied.length} scopes emptied`,
  )
  t.diagnostic(
    `${checks.length} checks: ${JSON.stringify(stats)}; workload ${workloadMs} ms, total ${Date.now() - started} ms`,
  )

  if (mismatches.length > 0) {
    for (const m of mismatches) console.error(`MISMATCH (seed ${SEED}) ${m.label}: GET ${m.url}`)
    for (const m of mismatches.slice(0, 5))
      console.error(
        `MISMATCH (seed ${SEED}) ${m.label}\n  GET ${m.url}\n  expected ${inspect(m.expected, { depth: 8 })}\n  actual   ${inspect(m.actual, { depth: 8 })}`,
      )
    assert.fail(
      `${mismatches.length} of ${checks.length} answers differ from the replayed chain (seed ${SEED}); first: ${mismatches[0].label}: GET ${mismatches[0].url}`,
    )
  }
  // The run covered what it is about: forks seen by the store, every layout change, rows decoded and not.
  assert.ok(workload.forks.length >= 5, `forks happened (${workload.forks.length})`)
  assert.ok(platform.undone() >= 1, 'the indexer undid stored blocks')
  assert.equal(interesting.abiChanges.filter((h) => h > 2).length, 4, 'four setabi on rawdb after boot')
  assert.ok(stats.jsonRows > 0 && stats.errorRows > 0, 'rows decoded and rows that do not decode were compared')
})
