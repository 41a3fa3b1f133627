import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // Compiled output of src/ (npm run build); the sources are linted.
  { ignores: ['dist/'] },
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
    // bin/ and scripts/ are plain JavaScript (ESM) run by node; the few Node globals they use are declared here.
    files: ['bin/**/*.js', 'scripts/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { process: 'readonly', URL: 'readonly' } },
  },
)
