import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { recentAnswer } from '../../src/api/recent-answer.ts'

test('recentAnswer builds once per ttl, shares a build in progress, and does not keep a failure', async () => {
  let builds = 0
  let fail = false
  // A ttl far above a build's time, so a loaded machine cannot expire it between two calls.
  const answer = recentAnswer(1_000, async () => {
    builds++
    await sleep(5)
    if (fail) throw new Error('store unreachable')
    return builds
  })
  assert.deepEqual(await Promise.all([answer(), answer(), answer()]), [1, 1, 1])
  assert.equal(await answer(), 1)
  await sleep(1_050)
  assert.equal(await answer(), 2)
  await sleep(1_050)
  fail = true
  await assert.rejects(answer(), /store unreachable/)
  fail = false
  assert.equal(await answer(), 4, 'a failed build is built again at the next call')
})

test('recentAnswer with a stamp builds again as soon as the stamp changes, within the ttl', async () => {
  let builds = 0
  let step = 1
  const answer = recentAnswer(
    60_000,
    async () => ++builds,
    () => step,
  )
  assert.equal(await answer(), 1)
  assert.equal(await answer(), 1)
  step = 2
  assert.equal(await answer(), 2)
  assert.equal(await answer(), 2)
})
