/**
 * Combined reads (the `combinedReads` group): the client a token request names and the code or
 * token it presents, in one statement instead of two round trips. Each row comes as `jsonb`
 * (`to_jsonb`), whose fields carry the column names, so the topic modules' row mappings read it
 * as they read a row; a missing row is NULL.
 */
import type { ClientRecord, CodeRecord, GrantRecord, TokenRecord } from '../storage/types.js';
import { toClient } from './clients.js';
import { toCode } from './codes.js';
import type { Db } from './db.js';
import { toGrant, type Row } from './rows.js';
import { toToken } from './tokens.js';

/** `findClient` and `findCode`, in one statement. */
export async function findClientAndCode(
  db: Db,
  clientId: string,
  codeHash: string,
): Promise<{ client: ClientRecord | null; code: CodeRecord | null }> {
  const { rows } = await db.query(
    'findClientAndCode',
    `SELECT (SELECT to_jsonb(c) FROM ${db.t.clients} AS c WHERE c.id = $1) AS client,
      (SELECT to_jsonb(k) FROM ${db.t.codes} AS k WHERE k.hash = $2) AS code`,
    [clientId, codeHash],
  );
  const row = rows[0] ?? {};
  return { client: row['client'] ? toClient(row['client'] as Row) : null, code: row['code'] ? toCode(row['code'] as Row) : null };
}

/** `findClient` and `findToken` (the token joined to its grant), in one statement. */
export async function findClientAndToken(
  db: Db,
  clientId: string,
  tokenHash: string,
): Promise<{ client: ClientRecord | null; token: { token: TokenRecord; grant: GrantRecord } | null }> {
  const { rows } = await db.query(
    'findClientAndToken',
    `SELECT (SELECT to_jsonb(c) FROM ${db.t.clients} AS c WHERE c.id = $1) AS client,
      (SELECT jsonb_build_object('token', to_jsonb(t), 'grant', to_jsonb(g))
        FROM ${db.t.tokens} AS t JOIN ${db.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $2) AS found`,
    [clientId, tokenHash],
  );
  const row = rows[0] ?? {};
  const found = row['found'] as { token: Row; grant: Row } | null | undefined;
  return {
    client: row['client'] ? toClient(row['client'] as Row) : null,
    token: found ? { token: toToken(found.token), grant: toGrant(found.grant) } : null,
  };
}
