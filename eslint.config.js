import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Logs go through the pino logger (src/cli/logger.ts); stdout and stderr are written explicitly.
    files: ['src/cli/**'],
    rules: { 'no-console': ['error', {}] },
  },
  {
    // bin/ is plain JavaScript (ESM) run by node; the few Node globals it uses are declared here.
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { process: 'readonly' } },
  },
)
