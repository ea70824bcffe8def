/**
 * The demo platform's own sign-in, shared by the Fastify and Hono examples and free of any
 * framework: two demo accounts, sessions in memory keyed by the `demo_sid` cookie, the sign-in
 * page, and the `UserSessions` through which authgate asks "who is signed in?".
 *
 * Demo only: a real platform keeps password hashes, not passwords, and its sessions in a store.
 */
import { randomBytes } from 'node:crypto';
import { AuthorizationServer, MemoryStorage, escapeHtml, type Account, type UserSession, type UserSessions } from '../../src/index.js';

const users: { password: string; account: Account }[] = [
  { password: 'lovelace', account: { uuid: 'a3f1c2e4b5d60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' } },
  { password: 'builder', account: { uuid: 'b0b5e1f2a3c4d5e6f708192a3b4c5d6e', name: 'Bob Builder', email: 'bob@example.com' } },
];
const SESSION_COOKIE = 'demo_sid';
const signedIn = new Map<string, UserSession>(); // session id → account + sign-in time

function readCookie(header: string | string[] | null | undefined, name: string): string | undefined {
  const line = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const part of line.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** What authgate needs from the platform: who is signed in (from our session cookie), and since when. */
export const sessions: UserSessions = {
  current: (request) => signedIn.get(readCookie(request.headers['cookie'], SESSION_COOKIE) ?? '') ?? null,
};

/**
 * Check a posted sign-in form. On success: a new session (never the old id again) and the
 * `Set-Cookie` value for it; `null` for a wrong e-mail or password.
 */
export function signIn(form: Record<string, unknown>, cookieHeader: string | null | undefined): string | null {
  const user = users.find((u) => u.account.email === form['email'] && u.password === form['password']);
  if (!user) return null;
  signedIn.delete(readCookie(cookieHeader, SESSION_COOKIE) ?? '');
  const sid = randomBytes(32).toString('base64url');
  signedIn.set(sid, { account: user.account, authenticatedAt: Date.now() });
  return `${SESSION_COOKIE}=${sid}; Path=/; HttpOnly; SameSite=Lax`; // add `; Secure` behind https
}

/** After signing in: back into the authorization request (authgate's resume route), or home. */
export const afterSignIn = (interaction: unknown) =>
  typeof interaction === 'string' && interaction ? `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction)}` : '/';

/** The sign-in page; `interaction` is carried through the form when an authorization request waits. */
export function loginPage(interaction?: string, error?: string): string {
  const hidden = interaction ? `<input type="hidden" name="interaction" value="${escapeHtml(interaction)}">` : '';
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>Sign in</title><h1>Sign in</h1>
${error ? `<p style="color:#b00">${escapeHtml(error)}</p>` : ''}
<p>Demo accounts: <code>ada@example.com</code> / <code>lovelace</code>, <code>bob@example.com</code> / <code>builder</code>.</p>
<form method="post" action="/login">${hidden}
<p><label>E-mail <input name="email" type="email" required></label></p>
<p><label>Password <input name="password" type="password" required></label></p>
<button>Sign in</button></form></html>`;
}

/** The authorization server on MemoryStorage, and a demo client whose callback is served by the example. */
export async function createDemo(base: string) {
  const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions });
  const client = await server.registerClient({ name: 'Demo App', redirectUri: `${base}/demo/callback` });
  const authorizeUrl = `/v1/oauth/authorize?${new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    scope: 'read write',
    state: 'demo-state',
  })}`;
  return { server, client, authorizeUrl };
}

/** What the demo client's callback shows: the code, and how the client exchanges it. */
export function callbackText(
  base: string,
  client: { clientId: string; clientSecret: string; redirectUri: string },
  query: URLSearchParams,
): string {
  if (query.get('error'))
    return `The authorization was not granted: error=${query.get('error')} (${query.get('error_description') ?? ''})\n`;
  return (
    `code=${query.get('code')} state=${query.get('state')}\n\nExchange it (single use, 10 minutes):\n` +
    `curl -s -X POST ${base}/v1/oauth/token -d grant_type=authorization_code -d code=${query.get('code')} ` +
    `-d client_id=${client.clientId} -d client_secret=${client.clientSecret} --data-urlencode redirect_uri=${client.redirectUri}\n`
  );
}

/** The start-up message: where to click, and the client's credentials. */
export function banner(framework: string, base: string, demo: Awaited<ReturnType<typeof createDemo>>): string {
  return `authgate + ${framework} demo on ${base}/
  start here:  ${base}${demo.authorizeUrl}
  accounts:    ada@example.com / ada, bob@example.com / bob
  client:      client_id=${demo.client.clientId}
               client_secret=${demo.client.clientSecret}
               redirect_uri=${demo.client.redirectUri}
  API:         curl -H "Authorization: Bearer ACCESS_TOKEN" ${base}/v2/account`;
}
