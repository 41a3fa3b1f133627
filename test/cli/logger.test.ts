import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { createLogger } from '../../src/cli/logger.ts'
import { createProgressReporter } from '../../src/cli/progress.ts'

/** A stream that keeps what is written; `isTTY` as asked. */
function sink(isTTY = false): { stream: NodeJS.WriteStream; text(): string; lines(): Record<string, unknown>[] } {
  let text = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk)
      done()
    },
  }) as unknown as NodeJS.WriteStream
  stream.isTTY = isTTY
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

test('createLogger writes one JSON line per entry at its level and above (info by default)', () => {
  const out = sink()
  const log = createLogger({ destination: out.stream })
  log.debug({ block_num: 1 }, 'not shown')
  log.info({ block_num: 7, undone: 2 }, 'fork undone')
  log.error({ err: new Error('boom') }, 'devchain error')
  const lines = out.lines()
  assert.equal(lines.length, 2)
  assert.deepEqual(
    { level: lines[0].level, msg: lines[0].msg, block_num: lines[0].block_num, undone: lines[0].undone },
    { level: 30, msg: 'fork undone', block_num: 7, undone: 2 },
  )
  assert.equal(lines[1].msg, 'devchain error')
  assert.equal((lines[1].err as { message: string }).message, 'boom')

  const quiet = sink()
  createLogger({ level: 'silent', destination: quiet.stream }).fatal('never')
  assert.equal(quiet.text(), '')
  const chatty = sink()
  createLogger({ level: 'debug', destination: chatty.stream }).debug('shown')
  assert.equal(chatty.lines()[0].msg, 'shown')
})

test('progress: off a TTY a `catching up` log line with snake_case fields; on a TTY a bar on the stream, not the log', async () => {
  const log = sink()
  const out = sink(false)
  const reporter = createProgressReporter({
    log: createLogger({ destination: log.stream }),
    out: out.stream,
    logEveryMs: 5,
  })
  await new Promise((r) => setTimeout(r, 10))
  reporter.onBlock({ num: 10, head: 1000, actions: 5 })
  assert.equal(out.text(), '')
  const [line] = log.lines()
  assert.equal(line.msg, 'catching up')
  assert.equal(line.block_num, 10)
  assert.equal(line.head, 1000)
  assert.equal(line.blocks_left, 990)
  for (const field of ['blocks_per_s', 'traces_per_s', 'row_changes_per_s', 'eta_s'])
    assert.equal(typeof line[field], 'number', field)

  const ttyLog = sink()
  const tty = sink(true)
  const bar = createProgressReporter({ log: createLogger({ destination: ttyLog.stream }), out: tty.stream })
  bar.onBlock({ num: 9, head: 1000, actions: 1 })
  await new Promise((r) => setTimeout(r, 1010))
  bar.onBlock({ num: 10, head: 1000, actions: 1 })
  assert.match(tty.text(), /^\r\[#*\.+\] index: block 10\/1000 \d+ blocks\/s \d+ traces\/s 990 left, ETA \dm\d\ds/)
  assert.equal(ttyLog.text(), '')
})
