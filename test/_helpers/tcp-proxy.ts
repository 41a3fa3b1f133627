import net from 'node:net'
import type { TestContext } from 'node:test'
import { onCleanup } from './cleanup.ts'

export interface TcpProxy {
  /** The proxy's base URL, e.g. http://127.0.0.1:41235 (same scheme as the target). */
  readonly url: string
  /** Connections accepted and piped to the target so far. */
  connections(): number
  /**
   * Cuts the network: destroys every proxied connection on both sides (the client sees its socket end abnormally,
   * close code 1006), and destroys each new connection at once until `restore()`.
   */
  cut(): void
  /** Lets new connections through again. */
  restore(): void
  /**
   * Points the proxy at another target (same scheme): open connections are closed (a node that restarts), new ones
   * reach `target`.
   */
  switchTo(target: string): void
}

/**
 * A TCP proxy in front of `target` (http://host:port) whose connections a test can cut, as a network failure would, or
 * send to another target.
 */
export async function startTcpProxy(t: TestContext, target: string): Promise<TcpProxy> {
  const { protocol } = new URL(target)
  let current = new URL(target)
  const live = new Set<net.Socket>()
  let down = false
  let accepted = 0
  const server = net.createServer((client) => {
    if (down) return void client.resetAndDestroy()
    accepted++
    const upstream = net.connect({ host: current.hostname, port: Number(current.port) })
    for (const socket of [client, upstream]) {
      live.add(socket)
      socket.on('error', () => undefined)
      socket.on('close', () => {
        live.delete(socket)
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onCleanup(
    t,
    () =>
      new Promise<void>((resolve) => {
        for (const socket of live) socket.destroy()
        server.close(() => resolve())
      }),
  )
  return {
    url: `${protocol}//127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => accepted,
    cut() {
      down = true
      // A reset, as a dropped link or a killed middlebox gives: no FIN, no WebSocket close frame.
      for (const socket of live) socket.resetAndDestroy()
    },
    restore() {
      down = false
    },
    switchTo(next) {
      current = new URL(next)
      for (const socket of live) socket.destroy()
    },
  }
}
