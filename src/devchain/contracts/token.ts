import { BinaryReader, BinaryWriter, nameToBigInt, bigIntToName } from '../../antelope/index.ts'
import type { ApplyContext } from '../chain/apply-context.ts'
import { check } from '../errors.ts'
import { isValidAsset, isValidSymbol, parseAsset, readAsset, symbolCode, writeAsset, type AssetValue } from './asset.ts'
import { defineAbi, defineNativeContract } from './native.ts'

/**
 * eosio.token, action for action and row for row as the reference contract: `stat` rows
 * (supply, max_supply, issuer) in scope = symbol code, `accounts` rows (balance) in scope = owner,
 * both keyed by the symbol code; the same checks with the same messages.
 */

const ABI_DEF = defineAbi({
  structs: {
    account: [['balance', 'asset']],
    close: [
      ['owner', 'name'],
      ['symbol', 'symbol'],
    ],
    create: [
      ['issuer', 'name'],
      ['maximum_supply', 'asset'],
    ],
    currency_stats: [
      ['supply', 'asset'],
      ['max_supply', 'asset'],
      ['issuer', 'name'],
    ],
    issue: [
      ['to', 'name'],
      ['quantity', 'asset'],
      ['memo', 'string'],
    ],
    open: [
      ['owner', 'name'],
      ['symbol', 'symbol'],
      ['ram_payer', 'name'],
    ],
    retire: [
      ['quantity', 'asset'],
      ['memo', 'string'],
    ],
    transfer: [
      ['from', 'name'],
      ['to', 'name'],
      ['quantity', 'asset'],
      ['memo', 'string'],
    ],
  },
  actions: ['close', 'create', 'issue', 'open', 'retire', 'transfer'],
  tables: { accounts: 'account', stat: 'currency_stats' },
})

interface Stats {
  supply: AssetValue
  maxSupply: AssetValue
  issuer: string
}

function readStats(value: Uint8Array): Stats {
  const r = new BinaryReader(value)
  return { supply: readAsset(r), maxSupply: readAsset(r), issuer: bigIntToName(r.uint64()) }
}

function writeStats(s: Stats): Uint8Array {
  const w = new BinaryWriter(40)
  writeAsset(w, s.supply)
  writeAsset(w, s.maxSupply)
  return w.uint64(nameToBigInt(s.issuer)).finish()
}

function writeBalance(balance: AssetValue): Uint8Array {
  return writeAsset(new BinaryWriter(16), balance).finish()
}

function readBalance(value: Uint8Array): AssetValue {
  return readAsset(new BinaryReader(value))
}

function checkMemo(memo: string): void {
  check(Buffer.byteLength(memo, 'utf8') <= 256, 'memo has more than 256 bytes')
}

const SELF_SCOPE_OF = (symbol: bigint) => bigIntToName(symbolCode(symbol))

function getStats(ctx: ApplyContext, symbol: bigint, missing: string): Stats {
  const row = ctx.db.find(SELF_SCOPE_OF(symbol), 'stat', symbolCode(symbol))
  check(row, missing)
  return readStats(row.value)
}

function putStats(ctx: ApplyContext, symbol: bigint, stats: Stats): void {
  const scope = SELF_SCOPE_OF(symbol)
  ctx.db.update(
    scope,
    'stat',
    symbolCode(symbol),
    ctx.db.find(scope, 'stat', symbolCode(symbol))!.payer,
    writeStats(stats),
  )
}

function subBalance(ctx: ApplyContext, owner: string, value: AssetValue): void {
  const row = ctx.db.find(owner, 'accounts', symbolCode(value.symbol))
  check(row, 'no balance object found')
  const balance = readBalance(row.value)
  check(balance.amount >= value.amount, 'overdrawn balance')
  ctx.db.update(
    owner,
    'accounts',
    symbolCode(value.symbol),
    owner,
    writeBalance({ amount: balance.amount - value.amount, symbol: balance.symbol }),
  )
}

function addBalance(ctx: ApplyContext, owner: string, value: AssetValue, ramPayer: string): void {
  const row = ctx.db.find(owner, 'accounts', symbolCode(value.symbol))
  if (!row) {
    ctx.db.store(owner, 'accounts', ramPayer, symbolCode(value.symbol), writeBalance(value))
    return
  }
  const balance = readBalance(row.value)
  ctx.db.update(
    owner,
    'accounts',
    symbolCode(value.symbol),
    row.payer,
    writeBalance({ amount: balance.amount + value.amount, symbol: balance.symbol }),
  )
}

function symbolValue(text: string): bigint {
  const match = /^([0-9]{1,2}),([A-Z]{1,7})$/.exec(text)
  check(match, 'invalid symbol name')
  return parseAsset(`${(0).toFixed(Number(match[1]))} ${match[2]}`).symbol
}

function apply(ctx: ApplyContext): void {
  // Notifications (from, to) reach this code only when the token account is notified, which it
  // never asks for; the reference contract has no notification handlers either.
  if (ctx.receiver !== ctx.act.account) return
  const self = ctx.receiver
  const abi = token.abi
  switch (ctx.act.name) {
    case 'create': {
      const a = ctx.decode<{ issuer: string; maximum_supply: string }>(abi, 'create')
      ctx.requireAuth(self)
      const max = parseAsset(a.maximum_supply)
      check(isValidSymbol(max.symbol), 'invalid symbol name')
      check(isValidAsset(max), 'invalid supply')
      check(max.amount > 0n, 'max-supply must be positive')
      check(!ctx.db.find(SELF_SCOPE_OF(max.symbol), 'stat', symbolCode(max.symbol)), 'token with symbol already exists')
      ctx.db.store(
        SELF_SCOPE_OF(max.symbol),
        'stat',
        self,
        symbolCode(max.symbol),
        writeStats({ supply: { amount: 0n, symbol: max.symbol }, maxSupply: max, issuer: a.issuer }),
      )
      return
    }
    case 'issue': {
      const a = ctx.decode<{ to: string; quantity: string; memo: string }>(abi, 'issue')
      const q = parseAsset(a.quantity)
      check(isValidSymbol(q.symbol), 'invalid symbol name')
      checkMemo(a.memo)
      const st = getStats(ctx, q.symbol, 'token with symbol does not exist, create token before issue')
      check(a.to === st.issuer, 'tokens can only be issued to issuer account')
      ctx.requireAuth(st.issuer)
      check(isValidAsset(q), 'invalid quantity')
      check(q.amount > 0n, 'must issue positive quantity')
      check(q.symbol === st.supply.symbol, 'symbol precision mismatch')
      check(q.amount <= st.maxSupply.amount - st.supply.amount, 'quantity exceeds available supply')
      putStats(ctx, q.symbol, { ...st, supply: { amount: st.supply.amount + q.amount, symbol: st.supply.symbol } })
      addBalance(ctx, st.issuer, q, st.issuer)
      return
    }
    case 'retire': {
      const a = ctx.decode<{ quantity: string; memo: string }>(abi, 'retire')
      const q = parseAsset(a.quantity)
      check(isValidSymbol(q.symbol), 'invalid symbol name')
      checkMemo(a.memo)
      const st = getStats(ctx, q.symbol, 'token with symbol does not exist')
      ctx.requireAuth(st.issuer)
      check(isValidAsset(q), 'invalid quantity')
      check(q.amount > 0n, 'must retire positive quantity')
      check(q.symbol === st.supply.symbol, 'symbol precision mismatch')
      putStats(ctx, q.symbol, { ...st, supply: { amount: st.supply.amount - q.amount, symbol: st.supply.symbol } })
      subBalance(ctx, st.issuer, q)
      return
    }
    case 'transfer': {
      const a = ctx.decode<{ from: string; to: string; quantity: string; memo: string }>(abi, 'transfer')
      check(a.from !== a.to, 'cannot transfer to self')
      ctx.requireAuth(a.from)
      check(ctx.isAccount(a.to), 'to account does not exist')
      const q = parseAsset(a.quantity)
      const st = getStats(ctx, q.symbol, 'unable to find key')
      ctx.requireRecipient(a.from)
      ctx.requireRecipient(a.to)
      check(isValidAsset(q), 'invalid quantity')
      check(q.amount > 0n, 'must transfer positive quantity')
      check(q.symbol === st.supply.symbol, 'symbol precision mismatch')
      checkMemo(a.memo)
      const payer = ctx.hasAuth(a.to) ? a.to : a.from
      subBalance(ctx, a.from, q)
      addBalance(ctx, a.to, q, payer)
      return
    }
    case 'open': {
      const a = ctx.decode<{ owner: string; symbol: string; ram_payer: string }>(abi, 'open')
      ctx.requireAuth(a.ram_payer)
      check(ctx.isAccount(a.owner), 'owner account does not exist')
      const symbol = symbolValue(a.symbol)
      const st = getStats(ctx, symbol, 'symbol does not exist')
      check(st.supply.symbol === symbol, 'symbol precision mismatch')
      if (!ctx.db.find(a.owner, 'accounts', symbolCode(symbol)))
        ctx.db.store(a.owner, 'accounts', a.ram_payer, symbolCode(symbol), writeBalance({ amount: 0n, symbol }))
      return
    }
    case 'close': {
      const a = ctx.decode<{ owner: string; symbol: string }>(abi, 'close')
      ctx.requireAuth(a.owner)
      const symbol = symbolValue(a.symbol)
      const row = ctx.db.find(a.owner, 'accounts', symbolCode(symbol))
      check(row, "Balance row already deleted or never existed. Action won't have any effect.")
      check(readBalance(row.value).amount === 0n, 'Cannot close because the balance is not zero.')
      ctx.db.remove(a.owner, 'accounts', symbolCode(symbol))
      return
    }
    default:
      check(false, `unknown action ${ctx.act.name} on ${self}`)
  }
}

export const token = defineNativeContract({ name: 'eosio.token', abi: ABI_DEF, apply })
