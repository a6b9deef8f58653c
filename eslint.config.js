import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * auth/'s layers, top to bottom (ARCHITECTURE.md): a file may import only what is at or below its
 * own layer. Each entry: the files of a layer, then what sits above them.
 */
const AUTH_LAYERS = [
  ['housekeeping.ts', 'key-encryption-upgrade.ts'],
  ['scim/'],
  ['sign-in/'],
  ['sso/'],
  ['mfa/'],
  ['accounts/'],
  ['sessions/'],
  ['audit/'],
  ['throttling/'],
  ['context.ts'],
  ['keys/'],
  ['passwords/'],
  ['events.ts', 'notifications.ts', 'identity.ts', 'secure-random.ts'],
];

function authLayerRules() {
  return AUTH_LAYERS.slice(1).map((layer, index) => {
    const above = AUTH_LAYERS.slice(0, index + 1).flat();
    const inFolder = layer[0].endsWith('/');
    const prefix = inFolder ? '../' : './';
    const files = layer.map((entry) => `src/auth/${entry}${entry.endsWith('/') ? '**/*' : ''}`);
    const group = above.map((entry) => (entry.endsWith('/') ? `${prefix}${entry}*` : `${prefix}${entry.replace(/\.ts$/, '.js')}`));
    return { files, rules: { 'no-restricted-imports': ['error', { patterns: [{ group, message: 'auth/ imports run down its layers (ARCHITECTURE.md)' }] }] } };
  });
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-output/', 'data/', 'src/http/docs-assets/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
      // A 422 is thrown as a ValidationFailure, an Error by its prototype chain only (see its file).
      '@typescript-eslint/only-throw-error': [
        'error',
        { allow: [{ from: 'file', name: 'ValidationFailure', path: 'src/http/body/validation-failure.ts' }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  ...authLayerRules(),
);
