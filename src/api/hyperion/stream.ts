import type { IncomingMessage, Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { Server, type Socket } from 'socket.io'
import type { AuthService } from '../../auth/index.ts'
import { createBlockDecoderSource, createDecoderSource } from '../../lifecycle/index.ts'
import type { Subscription } from '../../live/index.ts'
import { createBlockDocumentMemo, hyperionChainName, type HyperionServices } from '../../hyperion/index.ts'
import {
  serveStreamSession,
  STREAM_SESSION_DEFAULTS,
  type ReplayEntry,
  type StreamSessionLimits,
} from './stream-session.ts'

/** Where Hyperion's socket.io server answers (its clients connect with `path: '/stream'`). */
export const HYPERION_STREAM_PATH = '/stream'
/** Largest client packet (requests are small objects). */
const MAX_PACKET_BYTES = 64 * 1024
/** Disconnected sockets whose requests are kept for a `reconnect`, and for how long. */
const MAX_REPLAYS = 1024
const REPLAY_TTL_MS = 60_000

export interface HyperionStreamOptions {
  readonly hyperion: HyperionServices
  readonly auth: AuthService
  /** `--hyperion-token`: the handshake needs a token (`auth: {token}` or `?token=`); else public, limited per IP. */
  readonly requireToken: boolean
  /** `--no-auth`: no token anywhere. */
  readonly noAuth: boolean
  /** Honour X-Forwarded-For for the per-IP limit. */
  readonly trustProxy: boolean
  readonly limits?: Partial<StreamSessionLimits>
}

const isStreamPath = (url: string | undefined) => (url ?? '').startsWith(`${HYPERION_STREAM_PATH}/`)

/**
 * @fastify/websocket routes every HTTP upgrade through Fastify (`/v1/stream`, `/graphql`), which would answer a
 * `/stream/` upgrade with a 404 before engine.io takes it: the upgrade listeners already on the server skip those.
 */
function leaveStreamUpgradesToEngine(server: HttpServer): void {
  type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void
  for (const listener of server.listeners('upgrade') as UpgradeListener[]) {
    server.off('upgrade', listener)
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!isStreamPath(request.url)) listener.call(server, request, socket, head)
    })
  }
}

function callerIp(socket: Socket, trustProxy: boolean): string {
  const forwarded = socket.handshake.headers['x-forwarded-for']
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim()
  return trustProxy && first ? first : socket.handshake.address
}

function tokenOf(socket: Socket): string | undefined {
  const fromAuth = (socket.handshake.auth as { token?: unknown } | undefined)?.token
  if (typeof fromAuth === 'string' && fromAuth !== '') return fromAuth
  const fromQuery = socket.handshake.query.token
  return typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : undefined
}

/** A small map of recently disconnected sockets' requests, oldest dropped first, each kept REPLAY_TTL_MS. */
function replayStore() {
  const entries = new Map<string, { at: number; requests: ReplayEntry[] }>()
  return {
    put(socketId: string, requests: ReplayEntry[]) {
      entries.set(socketId, { at: Date.now(), requests })
      while (entries.size > MAX_REPLAYS) entries.delete(entries.keys().next().value as string)
    },
    take(socketId: string) {
      const found = entries.get(socketId)
      entries.delete(socketId)
      return found && Date.now() - found.at <= REPLAY_TTL_MS ? found.requests : undefined
    },
  }
}

/**
 * Hyperion's socket.io streaming API (docs/HYPERION.md, Streaming) on the API's own port at `/stream`, websocket
 * transport only as Hyperion. Every connection is admitted like Hyperion's HTTP routes (public and counted per IP, or
 * with a token) and gets `handshake {chain, chain_id}`; `lib_update` goes to every connection as LIB moves. Closed
 * with the app.
 */
export function attachHyperionStream(app: FastifyInstance, options: HyperionStreamOptions): Server {
  const { hyperion } = options
  // Before engine.io adds its own upgrade listener: only the ones already there (Fastify's) are told to skip /stream/.
  leaveStreamUpgradesToEngine(app.server)
  const io = new Server(app.server, {
    path: HYPERION_STREAM_PATH,
    transports: ['websocket'],
    serveClient: false,
    destroyUpgrade: false,
    maxHttpBufferSize: MAX_PACKET_BYTES,
  })
  const deps = {
    store: hyperion.store,
    live: hyperion.live,
    decoders: createDecoderSource(hyperion.store),
    blockDecoders: createBlockDecoderSource(hyperion.store),
  }
  let chainIdOnce: Promise<string> | undefined
  const chainId = () => {
    chainIdOnce ??= hyperion.store.chainId().then((id) => id ?? '')
    chainIdOnce.catch(() => (chainIdOnce = undefined))
    return chainIdOnce
  }
  const context = {
    deps,
    memo: createBlockDocumentMemo(deps),
    chainId,
    limits: { ...STREAM_SESSION_DEFAULTS, ...options.limits },
    replays: replayStore(),
    onUnexpected: (error: unknown) => app.log.error({ err: error }, 'hyperion stream: unexpected error'),
  }

  io.use((socket, next) => {
    const caller = { ip: callerIp(socket, options.trustProxy), origin: socket.handshake.headers.origin }
    const admission =
      options.requireToken && !options.noAuth
        ? options.auth.admit({ token: tokenOf(socket), caller })
        : options.requireToken
          ? Promise.resolve()
          : options.auth.admitPublic({ caller })
    admission.then(
      () => next(),
      (error: unknown) => {
        const refused = new Error(error instanceof Error ? error.message : 'refused') as Error & { data?: unknown }
        const status = (error as { status?: unknown }).status
        refused.data = {
          statusCode: typeof status === 'number' ? status : 401,
          code: (error as { code?: unknown }).code,
        }
        next(refused)
      },
    )
  })

  // lib_update: one subscription to the step log (from where it ends now) while any socket is connected.
  let libFeed: Subscription | undefined
  let libStarting = false
  const followLib = async () => {
    if (libFeed || libStarting) return
    libStarting = true
    await hyperion.live.ready()
    libStarting = false
    if (libFeed || io.engine.clientsCount === 0) return
    libFeed = hyperion.live.subscribe({
      afterSeq: hyperion.live.lastSeq,
      onSteps: async (steps) => {
        const last = steps.filter((s) => s.step.type === 'irreversible').at(-1)
        if (!last) return
        io.emit('lib_update', { chain_id: await chainId(), block_num: last.step.blockNum, block_id: last.step.blockId })
      },
      // Dropped (too slow, a failed read): follow again from where the log ends.
      onError: () => {
        libFeed = undefined
        void followLib().catch(context.onUnexpected)
      },
    })
  }

  io.on('connection', (socket) => {
    void followLib().catch(context.onUnexpected)
    socket.on('disconnect', () => {
      if (io.engine.clientsCount === 0) {
        libFeed?.close()
        libFeed = undefined
      }
    })
    void chainId().then(
      // `chain`: Hyperion's short chain name; Antler has none, so the id's first 8 digits (as explorer_metadata's).
      (id) => socket.emit('handshake', { chain: hyperionChainName(id), chain_id: id }),
      (error: unknown) => context.onUnexpected(error),
    )
    serveStreamSession(socket, context)
  })

  app.addHook('preClose', async () => {
    libFeed?.close()
    libFeed = undefined
    io.disconnectSockets(true)
  })
  return io
}
