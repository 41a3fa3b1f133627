import { blockSlotToMs, formatNodeosTime, isChecksum256 } from '../../antelope/index.ts'
import { blockJson, finalizerInfoJson, springBlockHeaderState } from '../chain-json.ts'
import { chainErrors } from '../errors.ts'
import type { StoredBlock } from '../storage/block-log.ts'
import type { Body, ChainRouteContext } from './request.ts'

/**
 * The chain's head and blocks: `get_info`, `get_block`, `get_block_header_state` (Leap 5 semantics on
 * a legacy devchain, Spring's on a Savanna one) and, on a Savanna devchain only, `get_finalizer_info`.
 */
export function blockRoutes({ chain, route, abiOf }: ChainRouteContext): void {
  route('/v1/chain/get_info', () => {
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
  })

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

  // Spring's finalizer endpoint, on a Savanna devchain (a Leap 5 node, like the legacy devchain, has none).
  route('/v1/chain/get_finalizer_info', () => {
    const savanna = chain.savanna
    if (!savanna)
      throw chainErrors.notFound(
        'no endpoint /v1/chain/get_finalizer_info (a Savanna endpoint: start the devchain with --savanna)',
      )
    return finalizerInfoJson(chain)
  })
}
