/**
 * Named prepared statements (`PostgresStorageOptions.preparedStatements`). A statement sent
 * with a name is parsed, analysed and planned once per connection, and later runs of it on that
 * connection send only its values: for the joins and the multi-CTE single-use statements of the
 * hot paths, the planning was a large part of the database's work per request
 * (BENCHMARKS.md, "Prepared statements").
 *
 * A name stands for one text: the first time a text is sent it gets the next name of this
 * module, and keeps it for the life of the process. The names carry a random tag of the module
 * instance, so two copies of authgate (or two stores) on one pool never give one name to two
 * texts, which `pg` would refuse. A store builds a bounded set of texts (its table names, and
 * one text per count of rows an insert takes), but the count of names is capped all the same:
 * past `MAX_NAMED_STATEMENTS`, a new text runs unnamed, so neither the process nor a database
 * session can grow without bound.
 *
 * No statement returns a table's row type (the columns are listed, `CLIENT_COLUMNS`, ..., or the
 * row comes as `jsonb`): a prepared statement whose result is a table's whole row fails with
 * "cached plan must not change result type" once a migration adds a column, and an instance of the previous version keeps running
 * its statements while a newer one migrates the database (a rolling upgrade).
 */

/** At most this many texts get a name in one process; later ones run unnamed. */
export const MAX_NAMED_STATEMENTS = 1000;

const names = new Map<string, string>();
const tag = Math.floor(Math.random() * 0x1_0000_0000)
  .toString(36)
  .padStart(7, '0');

/** The name of `text`'s prepared statement, or `undefined` once the cap is reached (run it unnamed). */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
    name = `authgate_${tag}_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}
