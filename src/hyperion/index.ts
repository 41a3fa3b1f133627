export { HyperionBadRequestError, HyperionNotFoundError } from './errors.ts'
export type { HyperionServices } from './services.ts'
