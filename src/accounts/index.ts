// Portal accounts: passwords, sessions, the setup token, the sign-in throttle and the audit log (the store keeps them).
export {
  createAccountsService,
  normalizeLogin,
  SESSION_TTL_MS,
  type AccountsService,
  type ActiveSession,
  type StartedSession,
} from './service.ts'
export { prepareSetupToken, SETUP_TOKEN_FILE } from './setup-token.ts'
export { createSignInThrottle, SIGN_IN_FAILURES_PER_MINUTE, type SignInThrottle } from './sign-in-throttle.ts'
export { PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH } from './passwords.ts'
export { randomToken, sameToken, tokenHash } from './tokens.ts'
export { hourOf, rowsByKey, usageByWindow, USAGE_HISTORY_MS, USAGE_WINDOWS, type UsageTotals } from './usage-windows.ts'
export { createUsageRecorder, type UsageOutcome, type UsageRecorder } from './usage-recorder.ts'
export { createUsageMeter, type UsageMeter } from './usage-meter.ts'
