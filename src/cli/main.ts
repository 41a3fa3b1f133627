import { antlerProgram, registerCommandsFor } from './commands.ts'

// A bad flag or ANTLER_* value is one `error: option '…' …` line from commander (exit 1), no help
// dump; a failure while a command starts is one `antler: <message>` line, no stack.
async function main(): Promise<void> {
  const program = antlerProgram()
  await registerCommandsFor(program, process.argv)
  await program.parseAsync(process.argv)
}

main().catch((error: unknown) => {
  process.stderr.write(`antler: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
