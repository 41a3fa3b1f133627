import { AntlerError } from '../antelope/index.ts'
import type { BlockRecord, StepPayload } from '../store/index.ts'
import type { GraphqlContext, GraphqlServices } from './context.ts'
import { receiverRunners } from './results.ts'
import { blockHeader, TransactionTraceNode } from './trace-model.ts'

interface PageArgs {
  readonly first?: number | null
  readonly last?: number | null
  readonly before?: string | null
  readonly after?: string | null
}

/** An edge cursor of a block's traces: its position among them (opaque base64url). */
const edgeCursor = (index: number) => Buffer.from(`trace:${index}`).toString('base64url')

function edgeIndex(cursor: string, field: string): number {
  const match = /^trace:(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!match)
    throw new AntlerError('request_validation_error', {
      errors: { [field]: [`${field} is not a cursor of this block`] },
    })
  return Number(match[1])
}

/** The alpha `Block` type: a stored block with its transaction traces, paged (Relay connection arguments). */
class BlockNode {
  private content: Promise<StepPayload | undefined> | undefined

  constructor(
    private readonly record: BlockRecord,
    private readonly lib: number,
    private readonly services: GraphqlServices,
  ) {}

  get id(): string {
    return this.record.id
  }
  get num(): number {
    return this.record.num
  }
  /** The store's LIB when the query was answered (the block's own view of it is not stored). */
  get dposLIBNum(): number {
    return this.lib
  }
  get irreversible(): boolean {
    return this.record.num <= this.lib
  }
  get header() {
    return blockHeader(this.record)
  }

  private payload(): Promise<StepPayload | undefined> {
    const step = { seq: 0, type: 'new' as const, blockNum: this.record.num, blockId: this.record.id }
    this.content ??= this.services.store.stepPayloads([step]).then((payloads) => payloads[0])
    return this.content
  }

  async executedTransactionCount(): Promise<number> {
    const payload = await this.payload()
    return payload?.transactions.filter((t) => t.blockIndex >= 0 && t.status === 0).length ?? 0
  }

  async transactionTraces(args: PageArgs) {
    const payload = await this.payload()
    const traced = payload ? payload.transactions.filter((t) => t.blockIndex >= 0) : []
    let from = args.after ? edgeIndex(args.after, 'after') + 1 : 0
    let to = args.before ? Math.min(edgeIndex(args.before, 'before'), traced.length) : traced.length
    if (args.first !== null && args.first !== undefined) to = Math.min(to, from + args.first)
    if (args.last !== null && args.last !== undefined) from = Math.max(from, to - args.last)
    const accounts = new Set<string>()
    for (const a of payload?.actions ?? []) accounts.add(a.account).add(a.receiver)
    const decode = await this.services.decoders(this.record.num, accounts)
    const rows = { changes: payload?.rowChanges ?? [], runners: receiverRunners(payload?.actions ?? []) }
    const edges = traced.slice(from, Math.max(from, to)).map((transaction, i) => ({
      cursor: edgeCursor(from + i),
      node: new TransactionTraceNode({
        block: this.record,
        transaction,
        execution: payload!.actions.filter((a) => a.trxId === transaction.id),
        matching: new Set(),
        decode,
        rows: async () => rows,
      }),
    }))
    return {
      edges,
      pageInfo: {
        startCursor: edges[0]?.cursor ?? '',
        endCursor: edges.at(-1)?.cursor ?? '',
        hasNextPage: from + edges.length < traced.length,
        hasPreviousPage: from > 0,
      },
    }
  }
}

/** `block(id | num)`: exactly one of them; null when the store holds no such block. */
export async function blockQuery(_: unknown, args: { id?: string | null; num?: number | null }, ctx: GraphqlContext) {
  const byId = args.id !== null && args.id !== undefined
  const byNum = args.num !== null && args.num !== undefined
  if (byId === byNum)
    throw new AntlerError('request_validation_error', { errors: { block: ['give exactly one of id and num'] } })
  const { store } = ctx.services
  if (byId && !/^[0-9a-fA-F]{64}$/.test(args.id!))
    throw new AntlerError('request_validation_error', { errors: { id: ['id must be 64 hexadecimal digits'] } })
  const record = byId ? await store.blockById(args.id!.toLowerCase()) : await store.blockByNum(args.num!)
  if (!record) return null
  const lib = (await store.position())?.lib ?? 0
  return new BlockNode(record, lib, ctx.services)
}
