import { readFileSync } from 'node:fs';

/**
 * The package's version (package.json beside src/ and dist/): what the OpenAPI document, the
 * start log line and `--version` report, and what the database records beside each migration.
 */
export const PACKAGE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
