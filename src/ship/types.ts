/** SHiP wire shapes as plain JSON (what `decodeShipType` yields and `encodeShipType` takes). */

export interface ShipBlockPosition {
  block_num: number
  block_id: string
}

export interface GetBlocksRequestV0 {
  start_block_num: number
  end_block_num: number
  max_messages_in_flight: number
  have_positions: ShipBlockPosition[]
  irreversible_only: boolean
  fetch_block: boolean
  fetch_traces: boolean
  fetch_deltas: boolean
}

export interface GetBlocksRequestV1 extends GetBlocksRequestV0 {
  fetch_finality_data: boolean
}

export type ShipRequest =
  | ['get_status_request_v0', Record<string, never>]
  | ['get_blocks_request_v0', GetBlocksRequestV0]
  | ['get_blocks_ack_request_v0', { num_messages: number }]
  | ['get_blocks_request_v1', GetBlocksRequestV1]
  | ['get_status_request_v1', Record<string, never>]

export interface GetStatusResultV0 {
  head: ShipBlockPosition
  last_irreversible: ShipBlockPosition
  trace_begin_block: number
  trace_end_block: number
  chain_state_begin_block: number
  chain_state_end_block: number
  chain_id?: string | null
}

export interface GetStatusResultV1 extends GetStatusResultV0 {
  chain_id: string
  finality_data_begin_block: number
  finality_data_end_block: number
}

/** `bytes?` fields travel as lowercase hex in JSON form; the binary codec keeps them as bytes. */
export interface GetBlocksResultV0 {
  head: ShipBlockPosition
  last_irreversible: ShipBlockPosition
  this_block: ShipBlockPosition | null
  prev_block: ShipBlockPosition | null
  block: string | null
  traces: string | null
  deltas: string | null
}

export interface GetBlocksResultV1 extends GetBlocksResultV0 {
  finality_data: string | null
}

export type ShipResult =
  | ['get_status_result_v0', GetStatusResultV0]
  | ['get_blocks_result_v0', GetBlocksResultV0]
  | ['get_blocks_result_v1', GetBlocksResultV1]
  | ['get_status_result_v1', GetStatusResultV1]
