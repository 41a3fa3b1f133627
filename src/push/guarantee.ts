/** What a guaranteed push waits for before it answers (dfuse's `X-Eos-Push-Guarantee`). */
export type PushGuarantee = { kind: 'in-block' } | { kind: 'handoffs'; count: 1 | 2 | 3 } | { kind: 'irreversible' }

/** Parses the header value: in-block, handoff:N / handoffs:N (N = 1..3), irreversible; undefined for anything else. */
export function parsePushGuarantee(value: string): PushGuarantee | undefined {
  if (value === 'in-block') return { kind: 'in-block' }
  if (value === 'irreversible') return { kind: 'irreversible' }
  const handoffs = /^handoffs?:([123])$/.exec(value)
  if (handoffs) return { kind: 'handoffs', count: Number(handoffs[1]) as 1 | 2 | 3 }
  return undefined
}

/** The canonical header form of a guarantee (`in-block`, `handoffs:N`, `irreversible`), as dfuse normalized it. */
export function formatPushGuarantee(guarantee: PushGuarantee): string {
  return guarantee.kind === 'handoffs' ? `handoffs:${guarantee.count}` : guarantee.kind
}
