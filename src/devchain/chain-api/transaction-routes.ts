import { PublicKey } from '@wharfkit/antelope'
import type { ChainApiDeps } from '../chain-api.ts'
import { transactionTraceJson } from '../chain-json.ts'
import { packedInputFromJson, type PackedTransactionInput } from '../chain/intake.ts'
import { permissionKey } from '../chain/authority.ts'
import { chainErrors } from '../errors.ts'
import { isString, type ChainRouteContext } from './request.ts'

/**
 * Transactions: `get_required_keys`, the pushes (`push_transaction`, `send_transaction`,
 * `send_transaction2`, answered once the transaction is in a block or the pending block) and
 * `compute_transaction` (run against the pending state, then undone).
 */
export function transactionRoutes({ chain, route, abiOf }: ChainRouteContext, push: ChainApiDeps['push']): void {
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
    const outcome = push(input)
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
}

/** A public key in the chain's canonical text (`PUB_K1_…`), or the text as given when it is not a key. */
function safeKey(text: string): string {
  try {
    return PublicKey.from(text).toString()
  } catch {
    return text
  }
}
