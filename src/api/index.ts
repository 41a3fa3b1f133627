export { buildApp, type ApiConfig, type ApiServices } from './app.ts'
export type { HealthSource } from './routes/health.ts'
export type { WireError } from './wire-error.ts'
export { recentAnswer } from './recent-answer.ts'
