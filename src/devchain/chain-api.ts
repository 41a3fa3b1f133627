import Fastify, { type FastifyInstance, type FastifyError } from 'fastify'
import { PublicKey } from '@wharfkit/antelope'
import {
  blockSlotToMs,
  formatNodeosTime,
  isChecksum256,
  isValidName,
  parseKey,
  sha256,
  tableType,
  toHex,
  createWharfkitDecoder,
  bigIntToName,
  symbolCodeToBigInt,
} from '../antelope/index.ts'
import { contractRowKey } from './state/state-db.ts'
import type { Chain } from './chain/chain.ts'
import { chainAbiOf } from './chain/boot.ts'
import { packedInputFromJson, type PackedTransactionInput } from './chain/intake.ts'
import { permissionKey } from './chain/authority.ts'
import { blockJson, finalizerInfoJson, springBlockHeaderState, transactionTraceJson } from './chain-json.ts'
import { ChainError, chainErrors, nodeosErrorBody } from './errors.ts'
import type { StoredBlock } from './storage/block-log.ts'
import type { TransactionTrace } from './chain/traces.ts'
import { readAssetRow, formatAsset } from './contracts/asset-format.ts'

export const MAX_BODY_BYTES = 1024 * 1024
const MAX_TABLE_ROWS = 1000

/** What the HTTP layer needs from the producer: transactions go through it (block-time 0 produces at once). */
export interface ChainApiDeps {
  readonly chain: Chain
  /** Told of unexpected failures (answered 500 with a fixed message). */
  readonly onError?: (error: unknown) => void
  /** Pushes a signed transaction and answers once it is in a block (or the pending block). */
  push(input: PackedTransactionInput): {
    trace: TransactionTrace
    block: StoredBlock | undefined
    blockNum: number
    blockSlot: number
  }
  produce(blocks: number): StoredBlock
  fork(depth: number, drop: readonly string[]): unknown
}

type Body = Record<string, unknown>

function field<T>(body: Body, name: string, check: (v: unknown) => v is T, what: string): T {
  const value = body[name]
  if (!check(value)) throw chainErrors.badRequest(`${name} must be ${what}`)
  return value
}
const isString = (v: unknown): v is string => typeof v === 'string'
const isName = (v: unknown): v is string => typeof v === 'string' && isValidName(v)

function asBody(body: unknown): Body {
  if (body === undefined || body === null || body === '') return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw chainErrors.badRequest('the body must be a JSON object')
  return body as Body
}

export async function buildChainApi(deps: ChainApiDeps): Promise<FastifyInstance> {
  const { chain } = deps
  const app = Fastify({ bodyLimit: MAX_BODY_BYTES, logger: false })
  const abiOf = (account: string) => chainAbiOf(chain, account)
  const decoder = createWharfkitDecoder()

  // nodeos takes any content type (wharfkit and curl often send none or text/plain): parse it all as JSON.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body)
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch (error) {
      done(chainErrors.parse(`unable to parse the request body as JSON: ${(error as Error).message}`), undefined)
    }
  })

  app.setErrorHandler((error: FastifyError | Error, _req, reply) => {
    let chainError: ChainError
    if (error instanceof ChainError) chainError = error
    else if ((error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      chainError = chainErrors.payloadTooLarge(`the body is larger than ${MAX_BODY_BYTES} bytes`)
    else if ((error as FastifyError).statusCode && (error as FastifyError).statusCode! < 500)
      chainError = chainErrors.badRequest(error.message)
    else {
      deps.onError?.(error)
      chainError = new ChainError({
        chainCode: 0,
        chainName: 'exception',
        what: 'unspecified',
        message: 'internal error',
      })
    }
    reply.status(chainError.status).send(nodeosErrorBody(chainError))
  })
  app.setNotFoundHandler((req, reply) => {
    const e = chainErrors.notFound(`no endpoint ${req.url}`)
    reply.status(404).send(nodeosErrorBody(e))
  })

  const route = (path: string, handler: (body: Body) => unknown) => {
    app.route({ method: ['GET', 'POST'], url: path, handler: async (req) => handler(asBody(req.body)) })
  }

  const info = () => {
    const head = chain.head
    const lib = chain.lib
    const libBlock = chain.block(lib.blockNum)!
    return {
      server_version: 'a0000000',
      chain_id: chain.chainId,
      head_block_num: head.num,
      last_irreversible_block_num: lib.blockNum,
      last_irreversible_block_id: lib.blockId,
      head_block_id: head.id,
      head_block_time: formatNodeosTime(blockSlotToMs(head.slot)),
      head_block_producer: head.producer,
      virtual_block_cpu_limit: 200000000,
      virtual_block_net_limit: 1048576000,
      block_cpu_limit: 200000,
      block_net_limit: 1048576,
      // Spring 1.2.2 answers the same 20 fields as Leap 5 (LIB = fork database root).
      server_version_string: chain.savanna ? 'v1.2.2-antler-devchain' : 'v5.0.3-antler-devchain',
      fork_db_head_block_num: head.num,
      fork_db_head_block_id: head.id,
      server_full_version_string: chain.savanna ? 'v1.2.2-antler-devchain' : 'v5.0.3-antler-devchain',
      total_cpu_weight: '0',
      total_net_weight: '0',
      earliest_available_block_num: 1,
      last_irreversible_block_time: formatNodeosTime(blockSlotToMs(libBlock.slot)),
    }
  }
  route('/v1/chain/get_info', info)

  const findBlock = (body: Body): StoredBlock => {
    const ref = body.block_num_or_id
    let block: StoredBlock | undefined
    if (typeof ref === 'number' || (typeof ref === 'string' && /^[0-9]{1,10}$/.test(ref)))
      block = chain.block(Number(ref))
    else if (typeof ref === 'string' && isChecksum256(ref)) {
      const candidate = chain.block(parseInt(ref.slice(0, 8), 16))
      block = candidate?.id === ref ? candidate : undefined
    } else throw chainErrors.badRequest('block_num_or_id must be a block number or a block id')
    if (!block) throw chainErrors.unknownBlock(`Could not find block: ${String(ref)}`)
    return block
  }
  route('/v1/chain/get_block', (body) => blockJson(findBlock(body), abiOf))
  route('/v1/chain/get_block_header_state', (body) => {
    const block = findBlock(body)
    // Spring: any block, a legacy-shaped object with only block_num, id, header and additional_signatures filled.
    if (chain.savanna) return springBlockHeaderState(block, abiOf)
    if (block.num <= chain.lib.blockNum)
      throw chainErrors.unknownBlock(`Could not find reversible block: ${String(body.block_num_or_id)}`)
    const json = blockJson(block, abiOf)
    return {
      block_num: block.num,
      dpos_proposed_irreversible_blocknum: chain.lib.blockNum,
      dpos_irreversible_blocknum: chain.lib.blockNum,
      id: block.id,
      header: {
        timestamp: json.timestamp,
        producer: json.producer,
        confirmed: 0,
        previous: json.previous,
        transaction_mroot: json.transaction_mroot,
        action_mroot: json.action_mroot,
        schedule_version: 0,
        header_extensions: [],
        producer_signature: json.producer_signature,
      },
      validated: true,
    }
  })

  const accountOf = (name: string) => {
    const account = chain.state.get('account', name)
    if (!account) throw chainErrors.accountQuery(`unknown key (eosio::chain::name): ${name}`)
    return account
  }
  route('/v1/chain/get_abi', (body) => {
    const name = field(body, 'account_name', isName, 'an account name')
    accountOf(name)
    const abi = abiOf(name)
    return abi ? { account_name: name, abi: JSON.parse(JSON.stringify(abi)) } : { account_name: name }
  })
  route('/v1/chain/get_raw_abi', (body) => {
    const name = field(body, 'account_name', isName, 'an account name')
    const account = accountOf(name)
    const codeHash = chain.state.get('account_metadata', name)?.codeHash ?? '0'.repeat(64)
    return {
      account_name: name,
      code_hash: codeHash,
      abi_hash: account.abi.length ? toHex(sha256(account.abi)) : '0'.repeat(64),
      abi: Buffer.from(account.abi).toString('base64'),
    }
  })

  route('/v1/chain/get_account', (body) => {
    const name = field(body, 'account_name', isName, 'an account name')
    const account = accountOf(name)
    const meta = chain.state.get('account_metadata', name)
    const permissions = [...chain.state.rows('permission')]
      .filter(([, p]) => p.owner === name)
      .map(([, p]) => ({
        perm_name: p.name,
        parent: p.parent,
        required_auth: {
          threshold: p.auth.threshold,
          keys: p.auth.keys.map((k) => ({ key: PublicKey.from(k.key).toLegacyString(), weight: k.weight })),
          accounts: p.auth.accounts,
          waits: p.auth.waits,
        },
        linked_actions: [...chain.state.rows('permission_link')]
          .filter(([, l]) => l.account === name && l.requiredPermission === p.name)
          .map(([, l]) => (l.messageType ? { account: l.code, action: l.messageType } : { account: l.code })),
      }))
      .sort((a, b) => (a.perm_name < b.perm_name ? -1 : 1))
    const balance = chain.state.get(
      'contract_row',
      contractRowKey('eosio.token', name, 'accounts', symbolCodeToBigInt('EOS')),
    )
    const limit = {
      used: 0,
      available: -1,
      max: -1,
      last_usage_update_time: formatNodeosTime(blockSlotToMs(chain.head.slot)),
      current_used: 0,
    }
    return {
      account_name: name,
      head_block_num: chain.head.num,
      head_block_time: formatNodeosTime(blockSlotToMs(chain.head.slot)),
      privileged: meta?.privileged ?? false,
      last_code_update: formatNodeosTime(Number((meta?.lastCodeUpdateUs ?? 0n) / 1000n)),
      created: formatNodeosTime(blockSlotToMs(account.creationSlot)),
      ...(balance ? { core_liquid_balance: formatAsset(readAssetRow(balance.value)) } : {}),
      ram_quota: -1,
      net_weight: -1,
      cpu_weight: -1,
      net_limit: limit,
      cpu_limit: limit,
      ram_usage: Number(chain.state.get('resource_usage', name)?.ramUsage ?? 0n),
      permissions,
      total_resources: null,
      self_delegated_bandwidth: null,
      refund_request: null,
      voter_info: null,
      rex_info: null,
      subjective_cpu_bill_limit: limit,
      eosio_any_linked_actions: [],
    }
  })

  const scopeOf = (value: unknown): string => {
    if (typeof value !== 'string' && typeof value !== 'number') throw chainErrors.badRequest('scope must be a string')
    const text = String(value)
    try {
      return bigIntToName(/^[0-9]+$/.test(text) ? parseKey(text, 'uint64') : parseKey(text, 'name'))
    } catch {
      throw chainErrors.badRequest(`invalid scope ${JSON.stringify(text)}`)
    }
  }
  const boundOf = (value: unknown, keyType: string): bigint | undefined => {
    if (value === undefined || value === '' || value === null) return undefined
    const text = String(value)
    try {
      if (keyType === 'name') return parseKey(text, 'name')
      if (/^[0-9]+$/.test(text)) return parseKey(text, 'uint64')
      return parseKey(text, 'name')
    } catch {
      throw chainErrors.badRequest(`invalid bound ${JSON.stringify(text)}`)
    }
  }

  route('/v1/chain/get_table_rows', (body) => {
    const code = field(body, 'code', isName, 'an account name')
    const table = field(body, 'table', isName, 'a table name')
    const scope = scopeOf(body.scope)
    const json = body.json === true || body.json === 'true'
    const keyType = typeof body.key_type === 'string' ? body.key_type : ''
    const index =
      body.index_position === undefined ||
      body.index_position === '' ||
      body.index_position === 1 ||
      body.index_position === '1' ||
      body.index_position === 'primary'
    if (!index) throw chainErrors.contractTableQuery('the devchain serves the primary index only (index_position 1)')
    const limit = Math.min(MAX_TABLE_ROWS, Math.max(1, Number(body.limit ?? 10) || 10))
    const lower = boundOf(body.lower_bound, keyType)
    const upper = boundOf(body.upper_bound, keyType)
    const abi = abiOf(code)
    const rowType = abi ? tableType(abi, table) : undefined
    if (json && abi && !rowType) throw chainErrors.contractTableQuery(`Table ${table} is not specified in the ABI`)
    let keys = chain.state.contractRowKeys(code, scope, table).map((k) => chain.state.get('contract_row', k)!)
    keys = keys.filter(
      (r) => (lower === undefined || r.primaryKey >= lower) && (upper === undefined || r.primaryKey <= upper),
    )
    if (body.reverse === true) keys.reverse()
    const page = keys.slice(0, limit)
    const rows = page.map((r) => {
      let data: unknown = toHex(r.value)
      if (json && abi && rowType) {
        const decoded = decoder.decode({ abi, type: rowType, data: r.value })
        data = decoded.ok ? decoded.value : toHex(r.value)
      }
      return body.show_payer === true ? { data, payer: r.payer } : data
    })
    const more = keys.length > limit
    return { rows, more, next_key: more ? keys[limit].primaryKey.toString() : '' }
  })

  const tokenRows = (code: string, scope: string, table: string) =>
    chain.state.contractRowKeys(code, scope, table).map((k) => chain.state.get('contract_row', k)!)
  route('/v1/chain/get_currency_balance', (body) => {
    const code = field(body, 'code', isName, 'an account name')
    const account = field(body, 'account', isName, 'an account name')
    accountOf(code)
    const symbol = typeof body.symbol === 'string' ? body.symbol : undefined
    return tokenRows(code, account, 'accounts')
      .map((r) => formatAsset(readAssetRow(r.value)))
      .filter((text) => symbol === undefined || text.endsWith(` ${symbol}`))
  })
  route('/v1/chain/get_currency_stats', (body) => {
    const code = field(body, 'code', isName, 'an account name')
    const symbol = field(body, 'symbol', isString, 'a symbol code')
    let scope: string
    try {
      scope = bigIntToName(parseKey(symbol, 'symbol_code'))
    } catch {
      throw chainErrors.badRequest(`invalid symbol ${JSON.stringify(symbol)}`)
    }
    const out: Record<string, unknown> = {}
    for (const row of tokenRows(code, scope, 'stat')) {
      const abi = abiOf(code)
      const decoded = abi ? decoder.decode({ abi, type: 'currency_stats', data: row.value }) : undefined
      if (decoded?.ok) out[symbol] = decoded.value
    }
    return out
  })
  route('/v1/chain/get_required_keys', (body) => {
    const trx = body.transaction as
      { actions?: { authorization?: { actor: string; permission: string }[] }[] } | undefined
    const available = Array.isArray(body.available_keys) ? (body.available_keys as unknown[]).filter(isString) : []
    if (!trx || !Array.isArray(trx.actions)) throw chainErrors.badRequest('transaction must be a transaction object')
    const availableK1 = new Map(available.map((k) => [safeKey(k), k]))
    const required = new Set<string>()
    for (const action of trx.actions) {
      for (const level of action.authorization ?? []) {
        const permission = chain.state.get('permission', permissionKey(level.actor, level.permission))
        const key = permission?.auth.keys.find((k) => availableK1.has(k.key))
        if (!key)
          throw chainErrors.unsatisfiedAuthorization(
            `transaction declares authority '${JSON.stringify(level)}', but does not have signatures for it.`,
          )
        required.add(availableK1.get(key.key)!)
      }
    }
    return { required_keys: [...required] }
  })

  const pushAnswer = (input: PackedTransactionInput) => {
    const outcome = deps.push(input)
    return {
      transaction_id: outcome.trace.id,
      processed: transactionTraceJson(outcome.trace, {
        blockNum: outcome.blockNum,
        blockSlot: outcome.blockSlot,
        producerBlockId: outcome.block?.id ?? null,
        abiOf,
      }),
    }
  }
  route('/v1/chain/push_transaction', (body) => pushAnswer(packedInputFromJson(body)))
  route('/v1/chain/send_transaction', (body) => pushAnswer(packedInputFromJson(body)))
  route('/v1/chain/send_transaction2', (body) => pushAnswer(packedInputFromJson(body.transaction)))
  route('/v1/chain/compute_transaction', (body) => {
    const trace = chain.computeTransaction(packedInputFromJson(body.transaction))
    return {
      transaction_id: trace.id,
      processed: transactionTraceJson(trace, {
        blockNum: chain.head.num + 1,
        blockSlot: chain.head.slot + 1,
        producerBlockId: null,
        abiOf,
      }),
    }
  })

  // Spring's finalizer endpoint, on a Savanna devchain (a Leap 5 node, like the legacy devchain, has none).
  route('/v1/chain/get_finalizer_info', () => {
    const savanna = chain.savanna
    if (!savanna)
      throw chainErrors.notFound(
        'no endpoint /v1/chain/get_finalizer_info (a Savanna endpoint: start the devchain with --savanna)',
      )
    return finalizerInfoJson(chain)
  })

  const headJson = (b: StoredBlock) => ({ block_num: b.num, block_id: b.id })
  app.post('/v1/devchain/finality', async (req) => {
    const body = asBody(req.body)
    if (typeof body.stall !== 'boolean') throw chainErrors.badRequest('stall must be true or false')
    chain.setFinalityStalled(body.stall)
    return {
      stalled: body.stall,
      head: headJson(chain.head),
      last_irreversible: { block_num: chain.lib.blockNum, block_id: chain.lib.blockId },
    }
  })
  app.post('/v1/devchain/produce', async (req) => {
    const body = asBody(req.body)
    const blocks = body.blocks === undefined ? 1 : body.blocks
    if (typeof blocks !== 'number' || !Number.isInteger(blocks) || blocks < 1 || blocks > 10_000)
      throw chainErrors.badRequest('blocks must be an integer from 1 to 10000')
    return { head: headJson(deps.produce(blocks)) }
  })
  app.post('/v1/devchain/fork', async (req) => {
    const body = asBody(req.body)
    const depth = body.depth
    const drop = body.drop ?? []
    if (typeof depth !== 'number') throw chainErrors.badRequest('depth must be a number')
    if (!Array.isArray(drop) || !drop.every((d) => typeof d === 'string' && isChecksum256(d)))
      throw chainErrors.badRequest('drop must be a list of transaction ids')
    return deps.fork(depth, drop as string[])
  })

  return app
}

function safeKey(text: string): string {
  try {
    return PublicKey.from(text).toString()
  } catch {
    return text
  }
}
