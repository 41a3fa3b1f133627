import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox'
import { AbiCache, canonicalPublicKey } from '../../antelope/index.ts'
import {
  blockTime,
  chainAccount,
  HYPERION_LIMITS,
  HyperionBadRequestError,
  HyperionNotFoundError,
  keyAccountsAt,
  planActionQuery,
  searchActionDocuments,
  storeAccount,
  tokenBalances,
  topHolders,
} from '../../hyperion/index.ts'
import { createBlockDecoderSource } from '../../lifecycle/index.ts'
import type { SnapshotReader } from '../../store/index.ts'
import type { HyperionRouteOptions } from './index.ts'
import { withEnvelope } from './envelope.ts'
import { Flag, readAtHead, Limit, MAX_SKIP, Name, pageSize, Skip } from './state-params.ts'
import { stateSystemRoutes } from './state-system.ts'

/** get_links, get_top_holders: the rows read for one answer at most (skip + limit of the deepest page). */
const MAX_WINDOW = MAX_SKIP + 1_000
/** get_controlled_accounts: Hyperion answers 100 hits without paging; Antler answers up to this many. */
const CONTROLLED_ACCOUNTS_MAX = 1_000
/** get_top_holders: the balances read for one answer at most (every scope of the contract's `accounts`). */
const TOP_HOLDERS_MAX_ROWS = 200_000
/** get_account: the default and largest page of its `actions` (Hyperion: 20 and 200). */
const ACCOUNT_ACTIONS = { default: 20, max: 200 }
/** get_account: `total_actions` counts up to this many (get_actions' `track=true` cap). */
const ACCOUNT_ACTIONS_COUNT_CAP = 100_000

/**
 * One account's links at head through its own key (the account-less read walks every current link), filtered and
 * ordered as `linksAtHead` answers them.
 */
async function linksOfAccount(
  reader: Pick<SnapshotReader, 'permissionLinks'>,
  filter: { account: string; code?: string; action?: string; permission?: string; blockNum: number },
) {
  const links = await reader.permissionLinks({ account: filter.account, blockNum: filter.blockNum })
  return links
    .filter(
      (l) =>
        (filter.code === undefined || l.contract === filter.code) &&
        (filter.action === undefined || l.action === filter.action) &&
        (filter.permission === undefined || l.permission === filter.permission),
    )
    .map((l) => ({ ...l, account: filter.account }))
    .sort((a, b) => b.blockNum - a.blockNum)
}

/** A public key in PUB_K1 form (how the store keeps keys) from any form; 400 `invalid public key` otherwise. */
function publicKeyParam(text: string): string {
  const key = canonicalPublicKey(text)
  if (key === undefined) throw HyperionBadRequestError('invalid public key')
  return key
}

const KeyAccountsQuery = Type.Object({
  public_key: Type.String({ minLength: 1, maxLength: 256 }),
  details: Flag,
  limit: Limit,
  skip: Skip,
})
const KeyAccountsBody = Type.Object({ public_key: Type.String({ minLength: 1, maxLength: 256 }) })

const TokenSchema = Type.Object({
  symbol: Type.String(),
  precision: Type.Number(),
  amount: Type.Number(),
  contract: Type.String(),
})
const LinkSchema = Type.Object({
  block_num: Type.Number(),
  timestamp: Type.String(),
  account: Type.String(),
  permission: Type.String(),
  code: Type.String(),
  action: Type.String(),
})

/** /v2/state/* and POST /v1/history/get_key_accounts, get_controlled_accounts (docs/HYPERION.md). */
export const stateRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  const { store } = hyperion
  const abis = new AbiCache(256)
  const decoders = createBlockDecoderSource(store)

  /** The accounts of a key at head, paged (`account_names` and, with details, their permissions). */
  const keyAccounts = (publicKey: string, page: { skip: number; limit: number }) =>
    readAtHead(store, { accounts: [], permissions: [] }, async (reader, head) => {
      const found = await keyAccountsAt(reader, { publicKey, blockNum: head })
      const accounts = found.accounts.slice(page.skip, page.skip + page.limit)
      return { accounts, permissions: found.permissions.filter((p) => accounts.includes(p.owner)) }
    })

  app.get(
    '/v2/state/get_key_accounts',
    {
      schema: {
        summary: 'Accounts whose permissions hold a public key at head (any key format; answered in PUB_K1 form)',
        tags: ['hyperion'],
        querystring: KeyAccountsQuery,
        response: {
          200: withEnvelope({
            public_key: Type.String(),
            account_names: Type.Array(Type.String()),
            permissions: Type.Optional(
              Type.Array(
                Type.Object({
                  owner: Type.String(),
                  name: Type.String(),
                  weight: Type.Number(),
                  threshold: Type.Number(),
                }),
              ),
            ),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query
      const publicKey = publicKeyParam(q.public_key)
      const limit = pageSize(q.limit, 100, HYPERION_LIMITS.get_key_accounts)
      const found = await keyAccounts(publicKey, { skip: q.skip ?? 0, limit })
      return {
        public_key: publicKey,
        account_names: found.accounts,
        ...(q.details ? { permissions: found.permissions } : {}),
      }
    },
  )

  const keyAccountsPost = async (body: Static<typeof KeyAccountsBody>) => {
    const found = await keyAccounts(publicKeyParam(body.public_key), {
      skip: 0,
      limit: HYPERION_LIMITS.get_key_accounts,
    })
    return { account_names: found.accounts }
  }
  const keyAccountsPostSchema = {
    tags: ['hyperion'],
    body: KeyAccountsBody,
    response: { 200: withEnvelope({ account_names: Type.Array(Type.String()) }) },
  }
  app.post(
    '/v2/state/get_key_accounts',
    { schema: { summary: 'get_key_accounts with a JSON body: `account_names` only', ...keyAccountsPostSchema } },
    async (request) => keyAccountsPost(request.body),
  )
  app.post(
    '/v1/history/get_key_accounts',
    {
      schema: {
        summary: "nodeos history plugin's get_key_accounts, from the permission state",
        ...keyAccountsPostSchema,
      },
    },
    async (request) => keyAccountsPost(request.body),
  )

  app.post(
    '/v1/history/get_controlled_accounts',
    {
      schema: {
        summary: 'Accounts having a permission whose authority lists an account, at head',
        tags: ['hyperion'],
        body: Type.Object({ controlling_account: Name() }),
        response: { 200: withEnvelope({ controlled_accounts: Type.Array(Type.String()) }) },
      },
    },
    async (request) => ({
      controlled_accounts: await store.controlledAccounts({
        account: request.body.controlling_account,
        limit: CONTROLLED_ACCOUNTS_MAX,
      }),
    }),
  )

  /** Every balance of an account at head, paged. */
  const tokensOf = (account: string, page: { skip: number; limit: number }) =>
    readAtHead(store, [], async (reader, head) => {
      const balances = await tokenBalances(reader, abis, { account, blockNum: head, window: page.skip + page.limit })
      return balances.slice(page.skip, page.skip + page.limit)
    })

  app.get(
    '/v2/state/get_tokens',
    {
      schema: {
        summary: 'Every token balance an account holds at head, in every contract, with its precision',
        tags: ['hyperion'],
        querystring: Type.Object({ account: Name(), limit: Limit, skip: Skip }),
        response: { 200: withEnvelope({ account: Type.String(), tokens: Type.Array(TokenSchema) }) },
      },
    },
    async (request) => {
      const q = request.query
      const limit = pageSize(q.limit, 50, HYPERION_LIMITS.get_tokens)
      return { account: q.account, tokens: await tokensOf(q.account, { skip: q.skip ?? 0, limit }) }
    },
  )

  /** Links in force at head (each filter optional), newest first, paged; `total` counts up to MAX_WINDOW. */
  const linksOf = (
    filter: { account?: string; code?: string; action?: string; permission?: string },
    page: { skip: number; limit: number },
  ) =>
    readAtHead(store, { total: { value: 0, relation: 'eq' }, links: [] }, async (reader, head) => {
      const found =
        filter.account === undefined
          ? await reader.linksAtHead({ ...filter, limit: MAX_WINDOW + 1 })
          : await linksOfAccount(reader, { ...filter, account: filter.account, blockNum: head })
      const total =
        found.length > MAX_WINDOW ? { value: MAX_WINDOW, relation: 'gte' } : { value: found.length, relation: 'eq' }
      const links = []
      for (const link of found.slice(page.skip, page.skip + page.limit))
        links.push({
          block_num: link.blockNum,
          timestamp: await blockTime(reader, link.blockNum),
          account: link.account,
          permission: link.permission,
          code: link.contract,
          action: link.action,
        })
      return { total, links }
    })

  app.get(
    '/v2/state/get_links',
    {
      schema: {
        summary: 'Permission links in force at head, by account, contract, action and permission',
        tags: ['hyperion'],
        querystring: Type.Object({
          account: Type.Optional(Name()),
          code: Type.Optional(Name()),
          action: Type.Optional(Name()),
          permission: Type.Optional(Name()),
          limit: Limit,
          skip: Skip,
          track: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 200: withEnvelope({ links: Type.Array(LinkSchema) }) },
      },
    },
    async (request) => {
      const { account, code, action, permission, limit, skip } = request.query
      return linksOf(
        { account, code, action, permission },
        { skip: skip ?? 0, limit: pageSize(limit, 50, HYPERION_LIMITS.get_links) },
      )
    },
  )

  app.get(
    '/v2/state/get_top_holders',
    {
      schema: {
        summary: "A token contract's holders at head, largest balance first, paged",
        tags: ['hyperion'],
        querystring: Type.Object({
          contract: Name(),
          symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 7 })),
          limit: Limit,
          // Every holder is ranked for an answer, so any of them can be paged to.
          skip: Type.Optional(Type.Integer({ minimum: 0, maximum: TOP_HOLDERS_MAX_ROWS })),
        }),
        response: {
          200: withEnvelope({
            contract: Type.String(),
            holders: Type.Array(
              Type.Object({
                owner: Type.String(),
                amount: Type.Number(),
                symbol: Type.String(),
                updated_on: Type.String(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query
      const skip = q.skip ?? 0
      const limit = pageSize(q.limit, 50, 500)
      const holders = await readAtHead(store, [], async (reader, head) => {
        const all = await topHolders(reader, abis, {
          contract: q.contract,
          symbol: q.symbol,
          blockNum: head,
          maxRows: TOP_HOLDERS_MAX_ROWS,
        })
        if (all === undefined)
          throw HyperionBadRequestError(
            `${q.contract} has more than ${TOP_HOLDERS_MAX_ROWS} balances: too many to rank`,
          )
        const page = []
        for (const h of all.slice(skip, skip + limit))
          page.push({
            owner: h.owner,
            amount: h.amount,
            symbol: h.symbol,
            updated_on: await blockTime(reader, h.blockNum),
          })
        return page
      })
      return { contract: q.contract, holders }
    },
  )

  app.get(
    '/v2/state/get_account',
    {
      schema: {
        summary: "An account: the chain's get_account, its recent actions, its tokens and its links",
        tags: ['hyperion'],
        querystring: Type.Object({ account: Name(), limit: Limit, skip: Skip }),
      },
    },
    async (request) => {
      const q = request.query
      const fromChain = hyperion.chainApi
        ? await chainAccount(hyperion.chainApi, hyperion.chainTimeoutMs, q.account)
        : undefined
      if (fromChain?.found === false) throw HyperionNotFoundError('account not found')
      const account =
        fromChain?.account ??
        (await readAtHead(store, undefined, (reader, head) =>
          storeAccount(reader, { account: q.account, blockNum: head }),
        ))
      if (account === undefined) throw HyperionNotFoundError('account not found')
      const tokens = await tokensOf(q.account, { skip: 0, limit: HYPERION_LIMITS.get_tokens })
      const links = await linksOf({ account: q.account }, { skip: 0, limit: HYPERION_LIMITS.get_links })
      const actions = await searchActionDocuments(store, decoders, {
        plan: planActionQuery({ account: q.account }),
        direction: 'backward',
        skip: q.skip ?? 0,
        limit: pageSize(q.limit, ACCOUNT_ACTIONS.default, ACCOUNT_ACTIONS.max),
        countCap: ACCOUNT_ACTIONS_COUNT_CAP,
        documents: { noBinary: true },
      })
      return {
        account,
        actions: actions.documents,
        total_actions: actions.total?.value ?? 0,
        tokens,
        links: links.links.map((l) => ({
          timestamp: l.timestamp,
          permission: l.permission,
          code: l.code,
          action: l.action,
        })),
      }
    },
  )

  await app.register(stateSystemRoutes, { hyperion })
}
