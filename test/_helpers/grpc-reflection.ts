import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { onCleanup } from './cleanup.ts'

/** The reflection proto @grpc/reflection ships (v1alpha, what grpcurl asks first). */
const REFLECTION_PROTO = fileURLToPath(
  new URL('../../node_modules/@grpc/reflection/build/proto/grpc/reflection/v1alpha/reflection.proto', import.meta.url),
)

/** The service names a gRPC server's reflection lists, sorted (the client is closed with the test). */
export async function reflectedServices(t: TestContext, address: string): Promise<string[]> {
  const definition = grpc.loadPackageDefinition(
    loadSync(REFLECTION_PROTO, { keepCase: true, defaults: true }),
  ) as never as {
    grpc: { reflection: { v1alpha: { ServerReflection: grpc.ServiceClientConstructor } } }
  }
  const client = new definition.grpc.reflection.v1alpha.ServerReflection(address, grpc.credentials.createInsecure())
  onCleanup(t, () => client.close())
  const stream = (
    client as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<object, never> }
  ).ServerReflectionInfo()
  const answer = await new Promise<{ list_services_response: { service: { name: string }[] } }>((resolve, reject) => {
    stream.on('data', resolve)
    stream.on('error', reject)
    stream.write({ list_services: '' })
  })
  stream.end()
  return answer.list_services_response.service.map((s) => s.name).sort()
}
