/**
 * The database freezes under load and comes back (docs/reference.md "Failures and outages"): every
 * process of a throwaway cluster stopped with SIGSTOP (pg-cluster.ts), as a network partition or a
 * stuck disk looks to a client: connections stay open and nothing answers. authgate on Express in
 * a child process (fixtures/outage-server.ts, its pool as the README sets it up but without its
 * `connectionTimeoutMillis`: nothing of the host's own bounds it, the worst case), bounds of `PostgresStorage` set short (`acquireTimeoutMs` 1000,
 * `queryTimeoutMs` 1500) so that a short freeze proves them.
 *
 * Load: 16 workers making bearer checks and 8 clients refreshing in chains; the clients are
 * careful: after a network error, their own timeout or a 5xx they retry later with the same
 * refresh token (they never saw a new one). Every client's timeout is shorter than the freeze:
 * half the chains give up after 1 s (before the bounds, so they lose answers the server still
 * commits), the other half wait past the bounds (every answer of theirs is measured). The server has refresh
 * retries for every client (`refreshRetryWindowSeconds: 60`), so a rotation that committed while
 * its answer was lost (cut by the bound or by the client's timeout) is retried, not replayed.
 * Asserted: every request that was waiting on the database while it was frozen is answered within
 * the bounds (plus a margin), with the documented status (resources 503
 * `temporarily_unavailable`, the token endpoint 500 `server_error`), never a network error other
 * than a refresh client's own timeout; the process lives; everything works again right after the
 * thaw; every access token still works, and every refresh chain survives (none lost to reuse
 * detection). Printed: the slowest answer during the freeze, the counts of 503 and 500 and of
 * client timeouts, the recovery time, and the retries.
 *
 * CI freezes 15 s, the issue's stall. The issue's own bounds (2000 + 3000 ms) are this test with
 * `PG_FREEZE_ACQUIRE_MS=2000 PG_FREEZE_QUERY_MS=3000` in the environment; docs/reference.md has
 * its figures.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { AuthorizationServer, type RegisteredClient } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { CALLBACK } from '../fixtures.js';
import { cookieValue, formValue, recordingHttp, type Sent, startServer } from './fixtures/outage-client.js';
import { clusterAvailable, type PgCluster, startCluster } from './pg-cluster.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** For the manual run of the issue (`PG_FREEZE_MS=15000 PG_FREEZE_ACQUIRE_MS=2000 PG_FREEZE_QUERY_MS=3000`); CI uses the numbers here. */
const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ACQUIRE_MS = setting('PG_FREEZE_ACQUIRE_MS', 1000);
const QUERY_MS = setting('PG_FREEZE_QUERY_MS', 1500);
/** The longest a request may take while the database is frozen: both bounds, and a margin for a loaded 2-core machine. */
const ANSWER_LIMIT = ACQUIRE_MS + QUERY_MS + 1500;
const BEARER_WORKERS = 16;
const REFRESH_CHAINS = 8;
const LOAD_BEFORE = 1000;
/** Longer than ANSWER_LIMIT: a request held for the whole freeze could not pass. */
const FREEZE_MS = setting('PG_FREEZE_MS', 15_000);
/** A refresh client's own timeout: shorter than the freeze, and than the bounds, so it cuts answers the server still commits. */
const CLIENT_TIMEOUT_MS = setting('PG_FREEZE_CLIENT_MS', 1000);
/** The other chains' timeout: shorter than the freeze too, but past the bounds, so their every answer is measured. */
const PATIENT_TIMEOUT_MS = Math.min(FREEZE_MS - 1000, ANSWER_LIMIT + 1000);
const LOAD_AFTER = 2500;
/** How long after the thaw a 5xx is still the freeze's (a request answered after it was sent during the freeze). */
const RECOVERY_LIMIT = ANSWER_LIMIT;

type Kind = 'bearer' | 'refresh' | 'setup';
describe.skipIf(!clusterAvailable)(
  'PostgreSQL frozen under load: every request answered within the bounds, then recovery',
  { timeout: 120_000 },
  () => {
    let cluster: PgCluster;
    let admin: pg.Pool;
    let child: ChildProcess | undefined;

    beforeAll(async () => {
      cluster = await startCluster();
      admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
      admin.on('error', () => {});
    });
    afterAll(async () => {
      cluster?.thaw();
      child?.kill('SIGKILL');
      await admin?.end().catch(() => {});
      await cluster?.stop();
    });

    it(`16 bearer workers and 8 careful refresh chains, the database frozen ${FREEZE_MS / 1000} s: 503 / 500 within the bounds, the process alive, working again at once after the thaw`, async () => {
      // ---- The server, in a process of its own.
      const instance = await startServer(
        {
          DATABASE_URL: cluster.url,
          PG_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_MS),
          PG_QUERY_TIMEOUT_MS: String(QUERY_MS),
          AUTHGATE_REFRESH_RETRY_SECONDS: '60',
        },
        (spawned) => {
          child = spawned;
        },
      );
      const { log } = instance;
      const origin = instance.origin;

      const sent: Sent<Kind>[] = [];
      // The client's own limit, well past the freeze: a request held for the whole freeze shows as such.
      const http = recordingHttp<Kind>(origin, sent, { timeoutMs: FREEZE_MS + 5000 });
      /** The refresh chains' client: its own timeout is shorter than the freeze. */
      const impatient = recordingHttp<Kind>(origin, sent, { timeoutMs: CLIENT_TIMEOUT_MS });
      const patient = recordingHttp<Kind>(origin, sent, { timeoutMs: PATIENT_TIMEOUT_MS });
      const clientTimeout = (r: Sent<Kind>) => r.kind === 'refresh' && r.status === 0 && /timeout|abort/i.test(r.error ?? '');

      // ---- Tokens, by the authorization code flow over HTTP.
      const registrar = new AuthorizationServer({ storage: new PostgresStorage(admin), sessions: { current: () => null } });
      const app: RegisteredClient = await registrar.registerClient({ name: 'Freeze App', redirectUri: CALLBACK });
      async function tokens(i: number): Promise<{ access: string; refresh: string }> {
        const account = i.toString(16).padStart(32, 'a');
        const query = new URLSearchParams({
          client_id: app.clientId,
          redirect_uri: CALLBACK,
          response_type: 'code',
          scope: 'read',
          state: 's',
        });
        const page = await http('setup', `/v1/oauth/authorize?${query}`, { headers: { 'x-test-account': account } });
        expect(page.status).toBe(200);
        const csrf = formValue(page.text, 'csrf')!;
        const decided = await http('setup', '/v1/oauth/authorize/decision', {
          headers: {
            'x-test-account': account,
            cookie: `authgate_csrf=${csrf}; authgate_browser=${cookieValue(page.setCookie, 'authgate_browser')}`,
          },
          form: { interaction: formValue(page.text, 'interaction')!, csrf, decision: 'approve' },
        });
        const code = new URL(decided.location!).searchParams.get('code')!;
        const res = await http('setup', '/v1/oauth/token', {
          form: {
            grant_type: 'authorization_code',
            code,
            redirect_uri: CALLBACK,
            client_id: app.clientId,
            client_secret: app.clientSecret!,
          },
        });
        expect(res.status).toBe(200);
        return { access: res.body['access_token'] as string, refresh: res.body['refresh_token'] as string };
      }
      const bearers = await Promise.all(Array.from({ length: BEARER_WORKERS }, (_, i) => tokens(i)));
      const chains = await Promise.all(Array.from({ length: REFRESH_CHAINS }, (_, i) => tokens(100 + i)));
      sent.length = 0;

      // ---- The load.
      let stopping = false;
      /** Chains that ended on a refusal: the answer, and when the database says the refused token was rotated. */
      const lost: Array<{ chain: number; status: number; error?: string; firstFailedAt?: number; refresh: string }> = [];
      const bearer = async (access: string) => {
        while (!stopping) {
          await http('bearer', '/v2/me', { headers: { authorization: `Bearer ${access}` } });
          await sleep(50);
        }
      };
      const refresher = async (chain: number) => {
        let firstFailedAt: number | undefined;
        while (!stopping) {
          const at = Date.now();
          const res = await (chain % 2 === 0 ? impatient : patient)('refresh', '/v1/oauth/token', {
            form: {
              grant_type: 'refresh_token',
              refresh_token: chains[chain]!.refresh,
              client_id: app.clientId,
              client_secret: app.clientSecret!,
            },
          });
          if (res.status === 200) {
            chains[chain] = { access: res.body['access_token'] as string, refresh: res.body['refresh_token'] as string };
            firstFailedAt = undefined;
            await sleep(50);
          } else if (res.status === 0 || res.status >= 500) {
            firstFailedAt ??= at;
            await sleep(200); // later, with the same refresh token
          } else {
            lost.push({
              chain,
              status: res.status,
              ...(typeof res.body['error'] === 'string' && { error: res.body['error'] }),
              ...(firstFailedAt !== undefined && { firstFailedAt }),
              refresh: chains[chain]!.refresh,
            });
            return;
          }
        }
      };
      const t0 = Date.now();
      const load = Promise.all([...bearers.map((t) => bearer(t.access)), ...chains.map((_, i) => refresher(i))]);
      await sleep(LOAD_BEFORE);
      const frozenAt = Date.now();
      cluster.freeze();
      let poolAtThaw: unknown;
      try {
        await sleep(FREEZE_MS);
        poolAtThaw = await (await fetch(`${origin}/pool`)).json();
      } finally {
        cluster.thaw();
      }
      const thawedAt = Date.now();
      await sleep(LOAD_AFTER);
      stopping = true;
      await load;

      // ---- The process is alive and said nothing of an uncaught error.
      expect(instance.child.exitCode, log.join('')).toBeNull();
      expect(instance.child.signalCode, log.join('')).toBeNull();
      expect(log.join('')).not.toMatch(/uncaught|unhandled|Connection terminated/i);
      const faults = (await (await fetch(`${origin}/faults`)).json()) as Record<string, number>;

      // ---- Figures.
      const timedOut = sent.filter(clientTimeout);
      const failed = sent.filter((r) => (r.status === 0 && !clientTimeout(r)) || r.status >= 500);
      /** Requests that were waiting on the database while it was frozen. */
      const duringFreeze = sent.filter((r) => r.end > frozenAt && r.start < thawedAt);
      const slowest = duringFreeze.reduce((max, r) => Math.max(max, r.end - r.start), 0);
      const firstOkAfterThaw = (kind: Kind) =>
        sent
          .filter((r) => r.kind === kind && r.status === 200 && r.start >= thawedAt)
          .reduce((min, r) => Math.min(min, r.end), Number.POSITIVE_INFINITY) - thawedAt;
      const count = (rows: Sent<Kind>[]) =>
        rows.reduce<Record<string, number>>((acc, r) => {
          const key = `${r.kind} ${r.status}${r.error ? ` ${r.error}` : ''}`;
          acc[key] = (acc[key] ?? 0) + 1;
          return acc;
        }, {});
      const usedAt = async (refresh: string) => {
        const { rows } = await admin.query('SELECT rotated_at FROM authgate_tokens WHERE hash = $1', [sha256Base64url(refresh)]);
        return rows[0]?.rotated_at == null ? null : Number(rows[0].rotated_at) - frozenAt;
      };
      // Retries the server granted: the siblings beyond the first child of each parent.
      const retried = Number(
        (
          await admin.query(`SELECT coalesce(sum(n - 1), 0) AS retried FROM (SELECT count(*) AS n FROM authgate_tokens
            WHERE kind = 'refresh' AND parent_hash IS NOT NULL GROUP BY parent_hash) AS children`)
        ).rows[0].retried,
      );
      const figures = {
        requests: sent.length,
        loadMs: Date.now() - t0,
        freezeMs: thawedAt - frozenAt,
        bounds: { acquireTimeoutMs: ACQUIRE_MS, queryTimeoutMs: QUERY_MS },
        answeredDuringFreeze: duringFreeze.length,
        slowestDuringFreezeMs: slowest,
        failedByKindStatus: count(failed),
        refreshClientTimeouts: timedOut.length,
        refreshRetried: retried,
        firstBearer200AfterThawMs: firstOkAfterThaw('bearer'),
        firstRefresh200AfterThawMs: firstOkAfterThaw('refresh'),
        lastFailureAfterThawMs: failed.reduce((last, r) => Math.max(last, r.end), 0) - thawedAt,
        poolAtThaw,
        poolAfter: await (await fetch(`${origin}/pool`)).json(),
        chainsLost: await Promise.all(
          lost.map(async (l) => ({ ...l, refresh: undefined, rotatedAtAfterFreezeMs: await usedAt(l.refresh) })),
        ),
        onError: faults,
      };
      console.log(`pg-freeze figures: ${JSON.stringify(figures, null, 2)}`);

      // ---- The freeze was felt, and answered within the bounds: no request was held for it.
      expect(failed.filter((r) => r.kind === 'bearer').length).toBeGreaterThan(BEARER_WORKERS);
      expect(sent.filter((r) => r.status === 0 && !clientTimeout(r))).toEqual([]);
      expect(
        duringFreeze.filter((r) => r.end - r.start > ANSWER_LIMIT).map((r) => ({ ...r, start: r.start - frozenAt, end: r.end - frozenAt })),
      ).toEqual([]);
      // Each failure is the documented one, and only the freeze's.
      for (const r of failed) {
        expect(r, JSON.stringify(r)).toMatchObject(
          r.kind === 'bearer' ? { status: 503, error: 'temporarily_unavailable' } : { status: 500, error: 'server_error' },
        );
        expect(r.end, 'a failure outside the freeze').toBeGreaterThan(frozenAt);
        expect(r.start, 'a failure outside the freeze').toBeLessThan(thawedAt + RECOVERY_LIMIT);
      }
      // What onError heard: the bounds running out.
      expect(Object.keys(faults).join('\n')).toMatch(
        new RegExp(`within (${ACQUIRE_MS}|${QUERY_MS}) ms \\((acquireTimeoutMs|queryTimeoutMs)\\)`),
      );
      // Recovery.
      expect(figures.firstBearer200AfterThawMs).toBeLessThan(RECOVERY_LIMIT);
      expect(figures.firstRefresh200AfterThawMs).toBeLessThan(RECOVERY_LIMIT);
      // Every chain survives: a refresh answered 500 or cut by the client's timeout, retried with
      // the same token, got a working pair (a retry when the rotation had committed).
      expect(figures.chainsLost).toEqual([]);
      expect(timedOut.length + failed.filter((r) => r.kind === 'refresh').length).toBeGreaterThan(0);

      // ---- Every access token of the bearer workers works after the thaw, and so does every chain
      // that was not lost.
      const after = await Promise.all([
        ...bearers.map((t) => http('bearer', '/v2/me', { headers: { authorization: `Bearer ${t.access}` } })),
        ...chains.map((t) =>
          http('refresh', '/v1/oauth/token', {
            form: { grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId, client_secret: app.clientSecret! },
          }),
        ),
      ]);
      expect(after.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
      expect(instance.child.exitCode).toBeNull();
    });
  },
);
