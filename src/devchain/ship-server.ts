import { WebSocket, WebSocketServer } from 'ws'
import {
  decodeRequest,
  encodeBlocksResult,
  encodeStatusResult,
  SHIP_ABI_TEXT,
  type BlocksRequest,
} from '../ship/index.ts'
import type { Chain } from './chain/chain.ts'

/** Bytes queued on one socket before the server stops sending until the client drains them. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024
const MAX_REQUEST_BYTES = 4 * 1024 * 1024

interface Session {
  readonly ws: WebSocket
  request: BlocksRequest | undefined
  cursor: number
  credits: number
  inFlightBytes: number
}

export interface ShipServer {
  readonly port: number
  readonly sessions: () => number
  close(): Promise<void>
}

/**
 * The devchain's state-history endpoint, speaking nodeos's protocol: the ABI as the first text
 * frame, then binary requests and results; results flow while the client has credits, at most up
 * to head (or LIB for `irreversible_only`); a fork rewinds every session past the fork point, so
 * clients see a lower block number followed by the new branch. v1 requests get v1 results, with
 * `finality_data` for Savanna blocks when `fetch_finality_data` is set (a Spring node run with
 * `--finality-data-history`).
 */
export async function startShipServer(args: {
  chain: Chain
  host: string
  port: number
  version?: string
}): Promise<ShipServer> {
  const { chain } = args
  const sessions = new Set<Session>()
  const wss = new WebSocketServer({
    host: args.host,
    port: args.port,
    perMessageDeflate: false,
    maxPayload: MAX_REQUEST_BYTES,
  })
  wss.on('headers', (headers) => headers.push(`Server: state_history/${args.version ?? 'antler-devchain'}`))
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve)
    wss.once('error', reject)
  })

  const statusOf = (v1: boolean) => {
    const head = chain.head
    const lib = chain.lib
    const savanna = chain.savanna
    return encodeStatusResult({
      v1,
      head: { blockNum: head.num, blockId: head.id },
      lastIrreversible: lib,
      traceBeginBlock: 1,
      traceEndBlock: head.num + 1,
      chainStateBeginBlock: 1,
      chainStateEndBlock: head.num + 1,
      chainId: chain.chainId,
      // A Spring node with --finality-data-history: the range of blocks it has finality data for.
      finalityDataBeginBlock: savanna ? savanna.from : 0,
      finalityDataEndBlock: savanna && head.num >= savanna.from ? head.num + 1 : 0,
    })
  }

  const pump = (s: Session) => {
    const q = s.request
    if (!q) return
    while (
      s.ws.readyState === WebSocket.OPEN &&
      s.credits > 0 &&
      s.cursor < q.endBlockNum &&
      s.inFlightBytes < MAX_BUFFERED_BYTES
    ) {
      const limit = q.irreversibleOnly ? chain.lib.blockNum : chain.head.num
      if (s.cursor > limit) return
      const block = chain.shipPayload(s.cursor)
      if (!block) return
      const bytes = encodeBlocksResult({
        v1: q.v1,
        head: { blockNum: chain.head.num, blockId: chain.head.id },
        lastIrreversible: chain.lib,
        thisBlock: { blockNum: block.num, blockId: block.id },
        prevBlock: block.num > 1 ? { blockNum: block.num - 1, blockId: block.previous } : undefined,
        block: q.fetchBlock ? block.block : undefined,
        traces: q.fetchTraces ? block.traces : undefined,
        deltas: q.fetchDeltas ? block.deltas : undefined,
        // As Spring: present only when asked for, and only for Savanna blocks.
        finalityData: q.v1 && q.fetchFinalityData ? block.finalityData : undefined,
      })
      s.credits--
      s.cursor++
      s.inFlightBytes += bytes.length
      s.ws.send(bytes, () => {
        s.inFlightBytes -= bytes.length
        if (s.inFlightBytes < MAX_BUFFERED_BYTES / 2) pump(s)
      })
    }
  }

  const startBlocks = (s: Session, q: BlocksRequest) => {
    // A position the client holds that is not on our chain (it missed a fork) rewinds the start to it.
    let start = Math.max(1, q.startBlockNum)
    for (const p of q.havePositions)
      if (p.blockNum < start && chain.blockIdAt(p.blockNum) !== p.blockId)
        start = Math.min(start, Math.max(1, p.blockNum))
    s.request = q
    s.cursor = start
    s.credits = q.maxMessagesInFlight
  }

  const unsubscribe = chain.subscribe((event) => {
    for (const s of sessions) {
      if (event.type === 'fork' && s.request && s.cursor > event.forkBlockNum) s.cursor = event.forkBlockNum
      if (event.type !== 'fork') pump(s)
    }
  })

  wss.on('connection', (ws) => {
    const session: Session = { ws, request: undefined, cursor: 1, credits: 0, inFlightBytes: 0 }
    sessions.add(session)
    ws.on('close', () => sessions.delete(session))
    ws.on('error', () => ws.terminate())
    ws.send(SHIP_ABI_TEXT)
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return ws.close(1003, 'expected a binary request')
      let message
      try {
        message = decodeRequest(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
      } catch (error) {
        return ws.close(1002, `bad request: ${(error as Error).message}`.slice(0, 120))
      }
      switch (message.kind) {
        case 'status':
          ws.send(statusOf(message.v1))
          return
        case 'blocks':
          startBlocks(session, message.request)
          return pump(session)
        case 'ack':
          session.credits = Math.min(0xffffffff, session.credits + message.numMessages)
          return pump(session)
      }
    })
  })

  const port = (wss.address() as { port: number }).port
  return {
    port,
    sessions: () => sessions.size,
    async close() {
      unsubscribe()
      for (const s of sessions) s.ws.close(1001, 'devchain shutting down')
      await new Promise<void>((resolve) => {
        wss.close(() => resolve())
        setTimeout(() => {
          for (const s of sessions) s.ws.terminate()
        }, 1000).unref()
      })
    },
  }
}
