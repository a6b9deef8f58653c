import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import { PACKAGE_VERSION } from '../package-version.js';
import { dialectOf, type Database } from './database.js';
import { recordingVersions } from './migration-versions.js';
import { refuseNewerDatabase } from './newer-database.js';
import { initial } from './migrations/001-initial.js';
import { loginThrottling } from './migrations/002-login-throttling.js';
import { throttleBlockedUntil } from './migrations/003-throttle-blocked-until.js';
import { signingKeyRevocation } from './migrations/004-signing-key-revocation.js';
import { credentialEpoch } from './migrations/005-credential-epoch.js';
import { throttleRefusals } from './migrations/006-throttle-refusals.js';
import { sessionRevocationIndex } from './migrations/007-session-revocation-index.js';
import { secondFactor } from './migrations/008-second-factor.js';
import { webauthn } from './migrations/009-webauthn.js';
import { revocationSequence } from './migrations/010-revocation-sequence.js';
import { secondFactorHardening } from './migrations/011-second-factor-hardening.js';
import { auditChain } from './migrations/012-audit-chain.js';
import { singleSignOn } from './migrations/013-single-sign-on.js';
import { ssoLogoutTokens } from './migrations/014-sso-logout-tokens.js';
import { notifications } from './migrations/015-notifications.js';
import { passwordRecovery } from './migrations/016-password-recovery.js';
import { directoryProvisioning } from './migrations/017-directory-provisioning.js';
import { erasure } from './migrations/018-erasure.js';
import { passkeySignIn } from './migrations/019-passkey-sign-in.js';

/** Every migration, in order. Names are permanent once released. */
const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-login-throttling': loginThrottling,
  '003-throttle-blocked-until': throttleBlockedUntil,
  '004-signing-key-revocation': signingKeyRevocation,
  '005-credential-epoch': credentialEpoch,
  '006-throttle-refusals': throttleRefusals,
  '007-session-revocation-index': sessionRevocationIndex,
  '008-second-factor': secondFactor,
  '009-webauthn': webauthn,
  '010-revocation-sequence': revocationSequence,
  '011-second-factor-hardening': secondFactorHardening,
  '012-audit-chain': auditChain,
  '013-single-sign-on': singleSignOn,
  '014-sso-logout-tokens': ssoLogoutTokens,
  '015-notifications': notifications,
  '016-password-recovery': passwordRecovery,
  '017-directory-provisioning': directoryProvisioning,
  '018-erasure': erasure,
  '019-passkey-sign-in': passkeySignIn,
};

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };

export const LATEST_MIGRATION = Object.keys(migrations).at(-1) ?? '';

/**
 * Kysely's bookkeeping tables live in the schema our tables live in. Left unqualified, Kysely
 * would find another schema's bookkeeping (another app, or another school-auth sharing the
 * database) and skip creating its own.
 */
async function migratorFor(database: Database): Promise<Migrator> {
  const options = { db: database.db, provider: recordingVersions(provider, PACKAGE_VERSION) };
  if (dialectOf(database.db) !== 'postgres') return new Migrator(options);
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
  const schema = rows[0]?.schema;
  if (schema === undefined) throw new Error('PostgreSQL reports no current schema: check search_path');
  return new Migrator({ ...options, migrationTableSchema: schema });
}

/**
 * Applies pending migrations. Kysely takes a lock first (an advisory lock on PostgreSQL), so when
 * several instances start at once exactly one applies them and the others wait.
 */
export async function migrateToLatest(database: Database): Promise<string[]> {
  await refuseNewerDatabase(database, LATEST_MIGRATION);
  const migrator = await migratorFor(database);
  const { error, results } = await retryingSchemaRace(() => database.withMigrationLock(() => migrator.migrateToLatest()));
  if (error !== undefined) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** True when every known migration has been applied (used by /readyz). */
export async function isMigrated(database: Database): Promise<boolean> {
  const migrator = await migratorFor(database);
  const applied = await retryingSchemaRace(() => migrator.getMigrations());
  return applied.every((migration) => migration.executedAt !== undefined);
}

/**
 * Kysely looks for its bookkeeping tables by listing the tables of every schema, checking each
 * schema's privileges: a schema that someone else drops meanwhile (another application, another
 * school-auth) fails that listing with `invalid_schema_name`, though nothing is wrong with ours.
 * Such a failure is retried a few times. Kysely reports it as a result or throws it.
 */
async function retryingSchemaRace<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await work().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    const failure = 'error' in outcome ? outcome.error : (outcome.value as { error?: unknown }).error;
    if (!isSchemaDroppedMeanwhile(failure) || attempt >= attempts) {
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
  }
}

function isSchemaDroppedMeanwhile(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '3F000';
}
