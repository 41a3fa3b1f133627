import { test } from 'node:test'
import assert from 'node:assert/strict'
import { antlerProgram, registerAllCommands, registerCommandsFor } from '../../src/cli/commands.ts'

// `antler --help` lists the commands from src/cli/commands.ts's table, without loading their modules: the list must
// be the one the modules register in full.
test('antler --help lists exactly what the command modules register (names, [options], descriptions, order)', async () => {
  const listed = antlerProgram()
  await registerCommandsFor(listed, ['node', 'antler', '--help'])
  const registered = antlerProgram()
  await registerAllCommands(registered)
  assert.match(registered.helpInformation(), /Commands:\n {2}devchain \[options\]/)
  assert.equal(listed.helpInformation(), registered.helpInformation())
})

test('a command named on the command line (antler dev …, antler help dev) is registered in full', async () => {
  for (const argv of [
    ['node', 'antler', 'dev', '--help'],
    ['node', 'antler', 'help', 'dev'],
  ]) {
    const program = antlerProgram()
    await registerCommandsFor(program, argv)
    const dev = program.commands.find((command) => command.name() === 'dev')
    assert.ok(
      dev?.options.some((option) => option.long === '--block-time'),
      argv.join(' '),
    )
  }
})
