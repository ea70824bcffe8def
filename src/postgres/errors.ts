/**
 * Database failures as `PostgresStorageError`s: which ones are worth one retry, and a message
 * that names the operation and never a value.
 */

/**
 * What a schema older than this code answers (a table, a column or a function of a later
 * migration missing: an instance upgraded before `migrate()` ran), and what to do about it.
 */
const MIGRATION_HINTS: Readonly<Record<string, string>> = {
  '42P01': ' A table is missing: call migrate() first.',
  '42703': ' A column is missing: the schema is older than this version of authgate; call migrate() first.',
  '42883': ' A function is missing: the schema is older than this version of authgate; call migrate() first.',
};

/**
 * A database failure, with a message that names the operation and never a value.
 * - `duplicate`: a row with the same key already exists (SQLSTATE 23505) or a row it refers to is
 *   missing (23503): a bug or a misuse, never retried.
 * - `serialization`: the database reported a conflict with a concurrent transaction (40001,
 *   40P01) and the operation failed again when retried once.
 * - `database`: anything else: the database could not be reached or the connection was lost,
 *   it refused the user or password, the database does not exist (the message says which), a
 *   timeout, a missing table, column or function (run `migrate()`).
 * The original error is in `cause`, for logs only: authgate answers `server_error` to clients.
 * @group Storage
 */
export class PostgresStorageError extends Error {
  override readonly name = 'PostgresStorageError';
  constructor(
    readonly kind: 'duplicate' | 'serialization' | 'database',
    readonly operation: string,
    readonly sqlState: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A bound of `PostgresStorage` ran out: no connection within `acquireTimeoutMs`, or no answer
 * within `queryTimeoutMs`. Internal: it reaches the host as the `cause` of a
 * `PostgresStorageError` of kind `database`.
 */
export class StorageTimeout extends Error {
  override readonly name = 'StorageTimeout';
  constructor(
    readonly bound: 'acquire' | 'query',
    readonly ms: number,
  ) {
    super(
      bound === 'acquire'
        ? `no connection of the pool within ${ms} ms (acquireTimeoutMs)`
        : `the database did not answer within ${ms} ms (queryTimeoutMs)`,
    );
  }
}

const RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

const sqlStateOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/** Node's codes for a connection that could not be made or broke. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOENT', // no Unix socket at the path
]);

/**
 * Whether `error` says the database could not be reached or the connection was lost: a
 * network error, SQLSTATE class 08 (connection exception) or 57P01..57P03 (the server shut down,
 * crashed or is starting), or one of `pg`'s own errors for a connection that ended (which carry
 * no code). Returns the code to show, or `''` when there is none, or `undefined`.
 */
function connectionFailure(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (CONNECTION_CODES.has(code)) return code;
    if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code)) return `SQLSTATE ${code}`;
  }
  const message = error instanceof Error ? error.message : '';
  return /^Connection terminated|not queryable/.test(message) ? '' : undefined;
}

/**
 * Why the database would not take the connection at all, in words, for the errors that are
 * neither a lost connection nor a failed statement: the sign-in refused (SQLSTATE class 28), the
 * database missing (3D000), too many connections (53300), or a connection string `pg` could not
 * parse (its `TypeError`). Only fixed texts: no value of the error.
 */
function refusal(state: string | undefined, error: unknown): string | undefined {
  if (state?.startsWith('28')) return `the database refused the user or password (SQLSTATE ${state})`;
  if (state === '3D000') return 'the database named in the connection string does not exist (SQLSTATE 3D000)';
  if (state === '53300') return 'the database has no connection left (SQLSTATE 53300)';
  if (error instanceof TypeError && /Invalid URL/i.test(error.message)) return 'the connection string is not a URL pg can read';
  return undefined;
}

/**
 * Why the database took too long, in words: a bound of `PostgresStorage` ran out
 * (`StorageTimeout`), `pg`'s own `connectionTimeoutMillis` or `query_timeout` of the pool did, or
 * the server cancelled the statement (SQLSTATE 57014: `statement_timeout`, or a cancel request).
 */
function timeout(state: string | undefined, error: unknown): string | undefined {
  if (error instanceof StorageTimeout) {
    return error.bound === 'acquire'
      ? `no database connection within ${error.ms} ms (acquireTimeoutMs): the database is not answering or every connection of the pool is busy`
      : `the database did not answer within ${error.ms} ms (queryTimeoutMs); the connection was closed`;
  }
  if (state === '57014') return 'the database cancelled the statement (SQLSTATE 57014: statement_timeout, or a cancel request)';
  const message = error instanceof Error ? error.message : '';
  if (message === 'Query read timeout') return "the database did not answer within the pool's query_timeout; the connection was closed";
  if (/^timeout exceeded when trying to connect/.test(message)) {
    return "no database connection within the pool's connectionTimeoutMillis: the database is not answering or every connection of the pool is busy";
  }
  return undefined;
}

/**
 * Whether a connection whose statement failed with `error` may serve again: the server answered
 * with an ordinary error (a SQLSTATE, of severity ERROR, outside class 08 and 57P01..57P03). A
 * killed backend's FATAL reaches the statement before its socket closes, and the pool would hand
 * the connection out again before it learns that it died; anything from the driver itself (no
 * SQLSTATE) is a broken or timed-out connection. `pool.query` of `pg` destroys the connection on
 * every failure; this keeps the ones an ordinary error leaves sound.
 */
export function connectionUsableAfter(error: unknown): boolean {
  const state = sqlStateOf(error);
  const severity = (error as { severity?: unknown } | null)?.severity;
  return state !== undefined && !/^08|^57P0[123]$/.test(state) && severity !== 'FATAL' && severity !== 'PANIC';
}

/**
 * Whether `error` is PostgreSQL refusing a prepared statement whose result's columns changed type
 * since it was prepared ("cached plan must not change result type", SQLSTATE 0A000): a column of
 * a statement's list altered by a newer version's migration while this one runs (statements.ts).
 * Every statement lists its columns, so a column added does not do it; one whose type changes does.
 */
export const planChanged = (error: unknown): boolean =>
  // Known by the server's routine, which is never translated (a server with another lc_messages
  // words the message in its language); by the English message from a driver that omits it.
  sqlStateOf(error) === '0A000' &&
  ((error as { routine?: unknown }).routine === 'RevalidateCachedQuery' ||
    (error instanceof Error && error.message.includes('cached plan must not change result type')));

/**
 * Whether `error` is PostgreSQL saying a named statement does not exist (26000) or exists already
 * (42P05): the driver keeps a list of the statements it prepared on each connection, and a
 * pooler that moves a client between server connections (PgBouncer in transaction mode) makes
 * that list wrong. Both are refused before the statement runs: nothing happened.
 */
export const statementGone = (error: unknown): boolean => {
  const state = sqlStateOf(error);
  return state === '26000' || state === '42P05';
};

/** Whether `error` is a serialization failure or a deadlock: worth running the operation once more. */
export const isRetryable = (error: unknown): boolean => RETRYABLE.has(sqlStateOf(error) ?? '');

/** `error` (anything a driver threw) as a `PostgresStorageError` of `operation`; `retried` when it failed twice. */
export function storageError(operation: string, error: unknown, retried: boolean): PostgresStorageError {
  if (error instanceof PostgresStorageError) return error;
  const state = sqlStateOf(error);
  const at = `authgate PostgresStorage.${operation}`;
  if (state === '23505' || state === '23503') {
    const what = state === '23505' ? 'a row with the same key already exists' : 'a row it refers to does not exist';
    return new PostgresStorageError('duplicate', operation, state, `${at}: ${what} (SQLSTATE ${state}).`, { cause: error });
  }
  if (state && RETRYABLE.has(state)) {
    return new PostgresStorageError(
      'serialization',
      operation,
      state,
      `${at}: the database reported a conflict with a concurrent transaction (SQLSTATE ${state})${retried ? ', again after one retry' : ''}.`,
      { cause: error },
    );
  }
  const late = timeout(state, error);
  if (late) return new PostgresStorageError('database', operation, state, `${at} failed: ${late}.`, { cause: error });
  const lost = connectionFailure(error);
  if (lost !== undefined) {
    return new PostgresStorageError(
      'database',
      operation,
      state,
      `${at} failed: the database could not be reached or the connection was lost${lost ? ` (${lost})` : ''}.`,
      { cause: error },
    );
  }
  const refused = refusal(state, error);
  if (refused) return new PostgresStorageError('database', operation, state, `${at} failed: ${refused}.`, { cause: error });
  const hint = MIGRATION_HINTS[state ?? ''] ?? '';
  return new PostgresStorageError('database', operation, state, `${at} failed${state ? ` (SQLSTATE ${state})` : ''}.${hint}`, {
    cause: error,
  });
}
