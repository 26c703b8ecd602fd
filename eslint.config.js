// Lint rules that carry design decisions, not just style:
// - domain/ is pure: it may not read the clock or import the API layer;
// - no floating promises: every async error must reach the work queue or a log line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cluster/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    // Plain JavaScript (this file, scripts/): lint without type information.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { projectService: false }, globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'domain/ is pure: take `now` as a parameter.',
        },
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'domain/ is pure: take `now` as a parameter.' },
        {
          selector: "CallExpression[callee.object.name='performance'][callee.property.name='now']",
          message: 'domain/ is pure: take `now` as a parameter.',
        },
      ],
      'no-restricted-imports': ['error', { patterns: ['**/k8s/**', '**/runtime/**', '**/reconcile/**', '@kubernetes/*', 'node:*'] }],
    },
  },
  {
    files: ['test/**/*.ts', 'cluster/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }],
        },
      ],
    },
  },
);
