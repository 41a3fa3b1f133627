import Fastify from 'fastify'

/**
 * The API bench's reference (bench/api.ts): a bare Fastify server in a process of its own, one GET route answering
 * the JSON body given as the first argument (the JWKS the Antler route answers, so both send the same bytes), no
 * plugin, hook or log. Tells its parent the port it listens on (IPC), stops on SIGTERM or when the parent goes away.
 */
const body = JSON.parse(process.argv[2] ?? '{}') as unknown
const app = Fastify({ logger: false })
app.get('/bare', async () => body)
const address = await app.listen({ host: '127.0.0.1', port: 0 })
process.send?.({ kind: 'serving', url: address })
const stop = () => void app.close().then(() => process.exit(0))
process.once('SIGTERM', stop)
process.once('disconnect', stop)
