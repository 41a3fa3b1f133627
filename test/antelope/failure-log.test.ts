import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createFailureLog } from '../../src/antelope/index.ts'
import { capturedLog } from '../_helpers/captured-log.ts'

/** A failure log over a captured logger and a clock the test moves. */
function failureLogAt(windowMs = 60_000) {
  const log = capturedLog()
  const clock = { ms: 1_000_000 }
  const failures = createFailureLog({ log, label: 'demo loop', windowMs, now: () => clock.ms, fields: { id: 'x' } })
  return { log, clock, failures, messages: () => log.lines.map((l) => l.message) }
}

test('the first failure is logged in full, with its error as err and the given fields', () => {
  const { log, failures } = failureLogAt()
  const error = new Error('store unavailable')
  failures.failed(error)
  assert.equal(log.lines.length, 1)
  assert.deepEqual(log.lines[0], {
    level: 'warn',
    fields: { id: 'x', err: error },
    message: 'demo loop failed: store unavailable',
  })
})

test('a loop failing once a second for a minute, then recovering, writes three lines', () => {
  const { clock, failures, messages } = failureLogAt()
  for (let i = 0; i < 58; i++) {
    failures.failed(new Error('store unavailable'))
    clock.ms += 1000
  }
  assert.equal(messages().length, 1, 'repeats within the window are only counted')
  failures.recovered()
  assert.deepEqual(messages(), [
    'demo loop failed: store unavailable',
    'demo loop failed 57 more times in the last 58 s: store unavailable',
    'demo loop recovered',
  ])
  failures.recovered()
  assert.equal(messages().length, 3, 'a recovery with nothing failing writes nothing')
})

test('a loop failing for an hour writes one count per window, not a line per failure', () => {
  const { log, clock, failures, messages } = failureLogAt(60_000)
  for (let i = 0; i < 3600; i++) {
    failures.failed(new Error('connection refused'))
    clock.ms += 1000
  }
  // The full line, then a count each time a failure comes a window after the last count.
  assert.equal(messages().length, 60)
  assert.equal(messages()[1], 'demo loop failed 60 more times in the last 60 s: connection refused')
  const counted = log.lines.slice(1).reduce((sum, l) => sum + (l.fields.failures as number), 0)
  failures.close()
  const pending = (log.lines.at(-1)?.fields.failures as number) ?? 0
  assert.equal(counted + pending, 3599, 'every repeat is counted once')
  assert.equal(messages().length, 61, 'close() writes the count still pending')
})

test('different messages of one loop are each logged in full once and counted apart', () => {
  const { clock, failures, messages } = failureLogAt()
  for (let i = 0; i < 5; i++) {
    failures.failed(new Error('timeout'))
    failures.failed('refused')
    clock.ms += 1000
  }
  failures.recovered()
  assert.deepEqual(messages(), [
    'demo loop failed: timeout',
    'demo loop failed: refused',
    'demo loop failed 4 more times in the last 5 s: timeout',
    'demo loop failed 4 more times in the last 5 s: refused',
    'demo loop recovered',
  ])
})

test('a failure long after a single one (nothing counted since) is logged in full again; after a recovery too', () => {
  const { clock, failures, messages } = failureLogAt(60_000)
  failures.failed(new Error('boom'))
  clock.ms += 120_000
  failures.failed(new Error('boom'))
  assert.deepEqual(messages(), ['demo loop failed: boom', 'demo loop failed: boom'])
  failures.recovered()
  failures.failed(new Error('boom'))
  assert.deepEqual(messages().slice(2), ['demo loop recovered', 'demo loop failed: boom'])
})

test('without a logger, failures are counted and dropped', () => {
  const failures = createFailureLog({ log: undefined, label: 'quiet' })
  failures.failed(new Error('x'))
  failures.failed(new Error('x'))
  failures.recovered()
  failures.close()
})
