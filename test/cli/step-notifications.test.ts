import { test } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import { followStepNotifications } from '../../src/cli/step-notifications.ts'

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A fake LISTEN: each call either fails at once or listens until `lose()` breaks it. */
function fakeListen(failures: number) {
  let calls = 0
  let active: { onSteps: () => void; onError: (error: unknown) => void } | undefined
  return {
    get calls() {
      return calls
    },
    notify: () => active?.onSteps(),
    lose() {
      const lost = active
      active = undefined
      lost?.onError(new Error('connection terminated'))
    },
    listen: async (onSteps: () => void, onError: (error: unknown) => void) => {
      calls++
      if (calls <= failures) {
        onError(new Error('refused')) // as the store does: reported, then thrown
        throw new Error('refused')
      }
      active = { onSteps, onError }
      return async () => {
        active = undefined
      }
    },
  }
}

test('step notifications: no polling while listening; a lost connection polls every fallbackPollMs and listens again', async () => {
  const fake = fakeListen(0)
  let wakes = 0
  const followed = await followStepNotifications({
    listen: fake.listen,
    wake: () => wakes++,
    logger: pino({ level: 'silent' }),
    fallbackPollMs: 20,
    retryMs: 150,
  })
  try {
    assert.equal(followed.listening(), true)
    assert.equal(wakes, 1, 'one wake when listening starts')
    await delay(100)
    assert.equal(wakes, 1, 'nothing polls while listening')
    fake.notify()
    assert.equal(wakes, 2, 'a notification wakes the hub')

    fake.lose()
    assert.equal(followed.listening(), false)
    await delay(110)
    assert.ok(wakes >= 2 + 3, `polling while the connection is lost (${wakes - 2} wakes in 110 ms)`)
    await delay(120)
    assert.equal(fake.calls, 2, 'listening tried again after retryMs')
    assert.equal(followed.listening(), true)
    const settled = wakes
    await delay(100)
    assert.equal(wakes, settled, 'polling stopped once listening again')
  } finally {
    await followed.stop()
  }
})

test('step notifications: listening that cannot start polls, and keeps trying until it can', async () => {
  const fake = fakeListen(2)
  let wakes = 0
  const followed = await followStepNotifications({
    listen: fake.listen,
    wake: () => wakes++,
    logger: pino({ level: 'silent' }),
    fallbackPollMs: 20,
    retryMs: 60,
  })
  try {
    assert.equal(followed.listening(), false)
    await delay(300)
    assert.equal(fake.calls, 3)
    assert.equal(followed.listening(), true)
    assert.ok(wakes >= 5, `polled while it could not listen (${wakes})`)
  } finally {
    await followed.stop()
  }
  const after = wakes
  await delay(100)
  assert.equal(wakes, after, 'nothing wakes after stop')
})
