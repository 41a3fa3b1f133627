import type { TestContext } from 'node:test'
import WebSocket, { WebSocketServer } from 'ws'
import { onCleanup } from './cleanup.ts'
import {
  decodeRequest,
  decodeResult,
  encodeBlocksResult,
  encodeRequest,
  encodeStatusResult,
  type BlocksRequest,
  type StatusResult,
} from '../../src/ship/index.ts'

export interface ShipProxyOptions {
  /** Rewrites the ABI text the upstream sends first (a node with another protocol). */
  readonly abi?: (text: string) => string
  /**
   * The node's retained state history starts at this block (a pruned Spring node): a blocks
   * request that starts below it gets one result without `this_block` for each number below it (as
   * Spring's cursor walks numbers it has no block for), then the upstream's blocks from here on.
   */
  readonly retainFrom?: number
  /** Whether the status says so too (`trace_begin_block` = `chain_state_begin_block` = retainFrom); default true. */
  readonly statusShowsRetention?: boolean
}

export interface ShipProxy {
  readonly url: string
  /** Connections opened so far. */
  sessions(): number
  /** The blocks requests clients sent, as received. */
  readonly requests: BlocksRequest[]
}

/**
 * A SHiP endpoint in front of a real one (the devchain's) that serves it as a different node
 * would: another ABI, or pruned history. Everything else passes through unchanged.
 */
export async function startShipProxy(
  t: TestContext,
  upstream: string,
  options: ShipProxyOptions = {},
): Promise<ShipProxy> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false })
  await new Promise((resolve) => wss.once('listening', resolve))
  let sessions = 0
  const requests: BlocksRequest[] = []
  const retainFrom = options.retainFrom ?? 0
  const nodes = new Set<WebSocket>()
  wss.on('connection', (client) => {
    sessions++
    const node = new WebSocket(upstream, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 })
    nodes.add(node)
    const early: Buffer[] = []
    let status: StatusResult | undefined
    const toNode = (data: Uint8Array | Buffer) =>
      node.readyState === WebSocket.OPEN ? node.send(data) : early.push(Buffer.from(data))
    node.on('open', () => {
      for (const data of early.splice(0)) node.send(data)
    })
    node.on('message', (data: Buffer, isBinary: boolean) => {
      if (client.readyState !== WebSocket.OPEN) return
      if (!isBinary) return client.send(options.abi ? options.abi(data.toString('utf8')) : data.toString('utf8'))
      const message = decodeResult(new Uint8Array(data))
      if (message.kind !== 'status') return client.send(data)
      status = message.status
      const shown =
        retainFrom && options.statusShowsRetention !== false
          ? { ...status, traceBeginBlock: retainFrom, chainStateBeginBlock: retainFrom }
          : status
      client.send(encodeStatusResult(shown))
    })
    client.on('message', (data: Buffer) => {
      const message = decodeRequest(new Uint8Array(data))
      if (message.kind !== 'blocks') return toNode(data)
      const request = message.request
      requests.push(request)
      if (!retainFrom || request.startBlockNum >= retainFrom || !status) return toNode(data)
      for (let n = request.startBlockNum; n < retainFrom; n++) {
        client.send(
          encodeBlocksResult({
            v1: request.v1,
            head: status.head,
            lastIrreversible: status.lastIrreversible,
            thisBlock: undefined,
            prevBlock: undefined,
            block: undefined,
            traces: undefined,
            deltas: undefined,
          }),
        )
      }
      toNode(encodeRequest({ kind: 'blocks', request: { ...request, startBlockNum: retainFrom, havePositions: [] } }))
    })
    client.on('close', () => node.close())
    node.on('close', () => {
      nodes.delete(node)
      client.close()
    })
    node.on('error', () => client.terminate())
    client.on('error', () => node.terminate())
  })
  onCleanup(
    t,
    () =>
      new Promise<void>((resolve) => {
        for (const socket of [...wss.clients, ...nodes]) socket.terminate()
        wss.close(() => resolve())
      }),
  )
  return { url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`, sessions: () => sessions, requests }
}
