/**
 * A test-only hook, as the store's failpoints (src/store/failpoints.ts): `ANTLER_GRAPHQL_FAILPOINT=resolver` makes
 * every root resolver and every subscription stream of the GraphQL schema fail with an error no one expected, so an
 * end-to-end test can follow an unexpected error from the client's `trace_id` to the server's one log line.
 */
export const GRAPHQL_FAILPOINTS = ['resolver'] as const

export type GraphqlFailpoint = (typeof GRAPHQL_FAILPOINTS)[number]

/** The failpoint armed by `ANTLER_GRAPHQL_FAILPOINT`, if any; an unknown name is refused at start. */
export function graphqlFailpoint(
  text: string | undefined = process.env.ANTLER_GRAPHQL_FAILPOINT,
): GraphqlFailpoint | undefined {
  if (!text) return undefined
  const found = GRAPHQL_FAILPOINTS.find((f) => f === text.trim())
  if (!found)
    throw new Error(
      `ANTLER_GRAPHQL_FAILPOINT must be one of ${GRAPHQL_FAILPOINTS.join(', ')}, not ${JSON.stringify(text)}`,
    )
  return found
}

/** The error the `resolver` failpoint throws (a plain Error: the transports treat it as unexpected). */
export const failpointError = (): Error => new Error('graphql failpoint `resolver`: a resolver failing on purpose')
