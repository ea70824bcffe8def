import { z } from 'zod';
import { randomId, randomToken, sha256Base64url } from '../crypto.js';
import { covers } from '../checks/scope.js';
import { redirectTo, redirectUriMatches } from '../checks/redirect-uri.js';
import { parseChallenge } from '../checks/pkce.js';
import { freshSignInAfter, sessionMeets } from '../checks/session.js';
import { audit, type Context } from '../context.js';
import { asciiDescription, OAuthError } from '../errors.js';
import { errorPage, pageFailure } from './failure.js';
import { accessTokenValue, familyEnd, mintAccessToken } from '../tokens/mint.js';
import { queryParams, single, type Params } from '../http.js';
import type { AuthorizationRequestRecord, ClientRecord, GrantRecord, InteractionRecord } from '../storage/types.js';
import type { Account, AuthorizeDecision, Interaction, OAuthRequest } from '../types.js';
import { bindRequest } from '../checks/browser-binding.js';
import { interactionStarted } from '../checks/pending-interactions.js';

/**
 * The authorization endpoint (SPEC 4.1, RFC 6749 §4.1.1, §4.2.1) and the interaction steps that
 * continue it: `resume` after sign-in, `approve` / `deny` after consent.
 *
 * Order of checks ("ad acta", RFC 6749 §3.1.2.4, §4.1.2.1): client and redirect URI first, and
 * until both are verified every error is an error page, never a redirect; then scope, also an
 * error page (SPEC 7.1); only then errors go back to the client's callback.
 */

type Mode = 'query' | 'fragment';

const PROMPTS = ['none', 'login', 'select_account'] as const;
const CONTROL = /[\x00-\x1f\x7f]/;

// The remaining parameters, validated once they are known to be single (zod issue → invalid_request).
export const restSchema = z.object({
  state: z.string().max(2048, 'state is longer than 2048 characters').regex(/^[^\x00-\x1f\x7f]*$/, 'state contains control characters').optional(),
  prompt: z.string().max(200).optional()
    .transform((v) => (v === undefined ? ['select_account'] : v.split(' ')))
    .refine((values) => values.every((p) => (PROMPTS as readonly string[]).includes(p)), 'prompt holds an unknown value')
    .refine((values) => !values.includes('none') || values.every((p) => p === 'none'), 'prompt=none cannot be combined with other values'),
  max_auth_age: z.string().regex(/^\d{1,10}$/, 'max_auth_age must be a non-negative integer number of seconds')
    .transform(Number).optional(),
  i: z.string().regex(/^[0-9A-Fa-f-]{1,36}$/, 'i must be the start of an account UUID').optional(),
});

type Rest = z.output<typeof restSchema>;
const ACCOUNT_HINT = /^[0-9A-Fa-f-]{1,36}$/;
const SECONDS = /^\d{1,10}$/;

/**
 * The same result as `restSchema.safeParse` for a request that passes it, without zod's cost
 * on every authorization request; `undefined` for anything else, which zod then explains.
 */
export function restFast(values: Partial<Record<'state' | 'prompt' | 'max_auth_age' | 'i', string>>): { success: true; data: Rest } | undefined {
  const { state, prompt, max_auth_age: maxAge, i } = values;
  if (state !== undefined && (state.length > 2048 || CONTROL.test(state))) return undefined;
  let prompts: string[] = ['select_account'];
  if (prompt !== undefined) {
    if (prompt.length > 200) return undefined;
    prompts = prompt.split(' ');
    if (!prompts.every((p) => (PROMPTS as readonly string[]).includes(p))) return undefined;
    if (prompts.includes('none') && !prompts.every((p) => p === 'none')) return undefined;
  }
  if (maxAge !== undefined && !SECONDS.test(maxAge)) return undefined;
  if (i !== undefined && !ACCOUNT_HINT.test(i)) return undefined;
  const data: Rest = { prompt: prompts };
  if (state !== undefined) data.state = state;
  if (maxAge !== undefined) data.max_auth_age = Number(maxAge);
  if (i !== undefined) data.i = i;
  return { success: true, data };
}

function redirectError(
  req: Pick<AuthorizationRequestRecord, 'redirectUri' | 'state'>,
  mode: Mode,
  ctx: Context,
  error: string,
  description: string,
): AuthorizeDecision {
  return {
    type: 'redirect',
    location: redirectTo(req.redirectUri, { error, error_description: asciiDescription(description), state: req.state, iss: ctx.options.issuer }, mode),
  };
}

const REUSED_CHALLENGE = 'This code_challenge was used before: send a fresh one with every authorization request.';

const modeOf = (req: AuthorizationRequestRecord): Mode => (req.responseType === 'token' ? 'fragment' : 'query');

/** GET /v1/oauth/authorize */
export async function authorize(ctx: Context, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    // GET only: a HEAD must not start an interaction or issue a code.
    if (request.method !== 'GET' && request.method.toUpperCase() !== 'GET') {
      return errorPage('invalid_request', 'The authorization endpoint only accepts GET requests.');
    }
    const params = queryParams(request);

    const clientIds = params.get('client_id');
    if (!clientIds || clientIds.length !== 1 || !clientIds[0]) {
      return errorPage('invalid_request', 'The request must name the application exactly once (client_id).');
    }
    // Control characters are never part of a client id (and a NUL would break a SQL store).
    const client = clientIds[0].length <= 200 && !CONTROL.test(clientIds[0]) ? await ctx.storage.findClient(clientIds[0]) : null;
    if (!client) return errorPage('invalid_client', 'The application (client_id) is not known.');

    const redirectUris = params.get('redirect_uri');
    const isPublic = client.secretHash === null;
    if (!redirectUris || redirectUris.length !== 1 || !redirectUriMatches(client.redirectUri, redirectUris[0]!, isPublic)) {
      return errorPage('invalid_redirect_uri', 'The redirect URI is not valid: it must equal the callback URL registered for this application.');
    }

    const scopes = params.get('scope');
    const scope = scopes && scopes.length > 1 ? null : ctx.scopes.parse(scopes?.[0] || undefined);
    if (!scope) {
      return errorPage('invalid_scope', `The requested scope is invalid, unknown or malformed. Use ${ctx.scopes.values.length === 2 && ctx.scopes.values[0] === 'read' ? "'read' or 'read write'" : 'values this server knows'}.`);
    }

    // From here on the callback is trusted: errors go back to it.
    const responseTypes = params.get('response_type');
    const states = params.get('state');
    const redirectUri = redirectUris[0]!;
    const echo = { redirectUri, state: states?.length === 1 && states[0] ? states[0] : undefined };
    const mode: Mode = responseTypes?.length === 1 && responseTypes[0] === 'token' ? 'fragment' : 'query';
    if (!responseTypes || responseTypes.length !== 1 || !responseTypes[0]) {
      return redirectError(echo, mode, ctx, 'invalid_request', 'The response_type parameter is missing or was sent more than once.');
    }
    const responseType = responseTypes[0];
    if (responseType !== 'code' && responseType !== 'token') {
      return redirectError(echo, mode, ctx, 'unsupported_response_type', "The response_type must be 'code' or 'token'.");
    }
    if (responseType === 'token' && !ctx.options.allowImplicit) {
      // RFC 9700 §2.1.2: the implicit grant SHOULD NOT be used; the strict profile turns it off.
      // Not supported by this server at all: unsupported_response_type (RFC 6749 §4.2.2.1).
      return redirectError(echo, mode, ctx, 'unsupported_response_type', 'The implicit flow (response_type=token) is not enabled on this server.');
    }
    if (client.responseTypes && !client.responseTypes.includes(responseType)) {
      // Supported here, but not for this client (e.g. a dynamically registered one): RFC 6749 §4.1.2.1, §4.2.2.1.
      return redirectError(echo, mode, ctx, 'unauthorized_client', `This application may not use response_type=${responseType}.`);
    }

    let values: Partial<Record<'state' | 'prompt' | 'max_auth_age' | 'i' | 'code_challenge' | 'code_challenge_method', string>>;
    try {
      values = single(params as Params, ['state', 'prompt', 'max_auth_age', 'i', 'code_challenge', 'code_challenge_method'] as const);
    } catch (error) {
      // A parameter sent twice; a duplicated state is not echoed (either value could be forged).
      if (error instanceof OAuthError) return redirectError({ ...echo, state: undefined }, mode, ctx, error.code, error.description);
      throw error;
    }
    // Valid requests are checked by hand (`restFast`); zod describes whatever is not.
    const parsed = restFast(values) ?? restSchema.safeParse(values);
    if (!parsed.success) {
      const echoState = parsed.error.issues.every((issue) => issue.path[0] !== 'state');
      return redirectError(echoState ? echo : { ...echo, state: undefined }, mode, ctx, 'invalid_request', `The request is malformed: ${parsed.error.issues[0]!.message}.`);
    }
    const rest = parsed.data;
    let pkce: ReturnType<typeof parseChallenge> = null;
    try {
      pkce = responseType === 'code' ? parseChallenge(values.code_challenge, values.code_challenge_method, ctx.options.allowPlainPkce) : null;
    } catch (error) {
      if (error instanceof OAuthError) return redirectError(echo, mode, ctx, error.code, error.description);
      throw error;
    }

    if (responseType === 'code' && !pkce && (isPublic || ctx.options.requirePkce)) {
      // RFC 9700 §2.1.1: public clients MUST use PKCE; the strict profile requires it of every client.
      return redirectError(echo, mode, ctx, 'invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
    }

    const req: AuthorizationRequestRecord = { clientId: client.id, redirectUri, responseType, scope, prompt: rest.prompt };
    if (rest.state !== undefined) req.state = rest.state;
    if (rest.max_auth_age !== undefined) req.maxAuthAge = rest.max_auth_age;
    if (rest.i !== undefined) req.accountHint = rest.i;
    bindRequest(req, request); // issue 14 item 10: the browser that sent it, carried by every interaction
    if (pkce) {
      // Refused here, before any page, when the challenge is known already; `issue` checks again
      // (and reports) for flows that were started side by side with the same challenge.
      if (ctx.options.rejectReusedPkceChallenge && ctx.challenges.has(client.id, pkce.codeChallenge)) {
        ctx.challenges.add(client.id, pkce.codeChallenge); // still in use: remembered afresh
        audit(ctx, { type: 'pkce.challenge_reused', clientId: client.id });
        return redirectError(echo, mode, ctx, 'invalid_request', REUSED_CHALLENGE);
      }
      req.codeChallenge = pkce.codeChallenge;
      req.codeChallengeMethod = pkce.codeChallengeMethod;
    }
    return await decide(ctx, client, req, request);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

async function decide(ctx: Context, client: ClientRecord, req: AuthorizationRequestRecord, request: OAuthRequest): Promise<AuthorizeDecision> {
  const now = ctx.clock.now();
  // A session that misses any requirement (the `i` hint, `max_auth_age`, a usable sign-in time)
  // counts as none: the user signs in (again), or `login_required` with prompt=none.
  const current = await ctx.sessions.current(request);
  const session = sessionMeets(ctx, { request: req, requestedAt: now, loginAfter: null }, current, now) ? current : null;

  if (req.prompt.includes('none')) {
    // SPEC 2.6: no user interaction at all; every outcome goes back to the callback.
    if (!session) return redirectError(req, modeOf(req), ctx, 'login_required', 'The user is not signed in.');
    // A public client is not identified by its client_id (anyone can send it, and any local
    // program can take a loopback port or a private-use scheme): a stored consent never lets it
    // through without the user (RFC 8252 §8.6; SECURITY-MATRIX U-12).
    if (client.secretHash === null) {
      return redirectError(req, modeOf(req), ctx, 'consent_required', 'This application is a public client: the user approves each of its requests.');
    }
    const consent = await ctx.storage.findConsent(session.account.uuid, client.id);
    if (!consent || !covers(consent.scope, req.scope)) {
      return redirectError(req, modeOf(req), ctx, 'consent_required', 'The user has not authorized this application for the requested scope.');
    }
    return issue(ctx, client, req, session.account, now);
  }

  if (!session || req.prompt.includes('login')) {
    // prompt=login and max_auth_age need a sign-in that happens after this request.
    return interaction(ctx, client, 'login', req, now, freshSignInAfter(req, now));
  }
  // select_account (the default): a signed-in user is asked every time.
  return interaction(ctx, client, 'consent', req, now, null, session.account);
}

async function interaction(
  ctx: Context,
  client: ClientRecord,
  kind: 'login' | 'consent',
  req: AuthorizationRequestRecord,
  requestedAt: number,
  loginAfter: number | null,
  account?: Account,
): Promise<AuthorizeDecision> {
  const id = randomToken();
  const expiresAt = ctx.clock.now() + ctx.options.lifetimes.interaction * 1000;
  const record: InteractionRecord = { idHash: sha256Base64url(id), kind, request: req, requestedAt, expiresAt, loginAfter };
  if (account) record.account = account;
  await ctx.storage.saveInteraction(record);
  await interactionStarted(ctx, record); // issue 14 item 11: audit, and the cap on anonymous ones
  const scopeDescriptions: Record<string, string> = {};
  for (const s of req.scope) scopeDescriptions[s] = ctx.scopes.describe(s);
  // Built field by field (no conditional spreads: each is an object more), in the documented order.
  const shown = { id, client: { id: client.id, name: client.name }, scope: [...req.scope], scopeDescriptions } as Interaction;
  if (account) shown.account = account;
  if (req.accountHint !== undefined) shown.accountHint = req.accountHint;
  shown.expiresAt = expiresAt;
  return { type: kind, interaction: shown };
}

/** Issue what the request asked for: a code (query) or an access token (fragment, no refresh token). */
async function issue(ctx: Context, client: ClientRecord, req: AuthorizationRequestRecord, account: Account, now: number): Promise<AuthorizeDecision> {
  const grant: GrantRecord = { id: randomId(), clientId: client.id, account, scope: req.scope, createdAt: now, revokedAt: null };
  const iss = ctx.options.issuer;
  if (req.responseType === 'code') {
    // Looked up and remembered in one synchronous step, so approvals that run side by side with
    // the same challenge cannot both pass unnoticed; forgotten again if no code comes of it.
    const challenge = req.codeChallenge;
    let fresh = false;
    if (challenge) {
      const reused = ctx.challenges.has(client.id, challenge);
      ctx.challenges.add(client.id, challenge);
      if (reused) {
        audit(ctx, { type: 'pkce.challenge_reused', clientId: client.id });
        if (ctx.options.rejectReusedPkceChallenge) return redirectError(req, 'query', ctx, 'invalid_request', REUSED_CHALLENGE);
      } else fresh = true;
    }
    const code = `${ctx.options.tokenPrefixes.code}${randomToken()}`;
    try {
      await ctx.storage.createGrant(grant, {
        code: {
          hash: sha256Base64url(code),
          grantId: grant.id,
          clientId: client.id,
          redirectUri: req.redirectUri,
          scope: req.scope,
          codeChallenge: challenge ?? null,
          codeChallengeMethod: req.codeChallengeMethod ?? null,
          expiresAt: now + ctx.options.lifetimes.code * 1000,
          usedAt: null,
        },
      });
    } catch (error) {
      if (fresh) ctx.challenges.delete(client.id, challenge!); // no code: a retry is no reuse
      throw error;
    }
    return { type: 'redirect', location: redirectTo(req.redirectUri, { code, state: req.state, iss }, 'query') };
  }
  const access = mintAccessToken(ctx, { grantId: grant.id, clientId: grant.clientId }, req.scope, now);
  const end = familyEnd(ctx, now); // lifetimes.grant: the token does not outlive its grant
  if (end !== null && access.record.expiresAt! > end) access.record.expiresAt = end;
  await ctx.storage.createGrant(grant, { tokens: [access.record] });
  audit(ctx, { type: 'token.issued', grantType: 'implicit', clientId: client.id, accountUuid: account.uuid, grantId: grant.id, scope: req.scope });
  return {
    type: 'redirect',
    location: redirectTo(req.redirectUri, {
      access_token: await accessTokenValue(ctx, access, grant),
      token_type: 'bearer',
      expires_in: String(Math.ceil((access.record.expiresAt! - now) / 1000)),
      scope: ctx.scopes.format(req.scope),
      state: req.state,
      iss,
    }, 'fragment'),
  };
}

const EXPIRED = 'This authorization step has expired or was already completed. Start again from the application.';
const STALE_SIGN_IN = 'The current sign-in does not meet what this authorization requires (a fresh or recent sign-in). Sign in again, then start again from the application.';

function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= 200;
}

/**
 * After the host signed the user in: continue the request behind a `login` decision. A
 * `consent` interaction may be resumed too: that is "use another account" (SPEC 2.6
 * `select_account`), and the consent is then asked anew of whoever is signed in now.
 */
export async function resume(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    if (!validId(interactionId)) return errorPage('invalid_request', EXPIRED);
    const record = await ctx.storage.takeInteraction(sha256Base64url(interactionId), ctx.clock.now());
    if (!record) return errorPage('invalid_request', EXPIRED);
    const client = await ctx.storage.findClient(record.request.clientId);
    if (!client) return errorPage('invalid_client', 'The application (client_id) is not known.');
    // Every requirement of the original request, against the session seen now (the consent
    // keeps `loginAfter`, so a fresh sign-in stays required up to the decision).
    const session = await ctx.sessions.current(request);
    if (!sessionMeets(ctx, record, session, ctx.clock.now())) {
      const loginAfter = record.loginAfter ?? freshSignInAfter(record.request, record.requestedAt);
      return await interaction(ctx, client, 'login', record.request, record.requestedAt, loginAfter);
    }
    return await interaction(ctx, client, 'consent', record.request, record.requestedAt, record.loginAfter, session.account);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/**
 * The consent record behind a decision, checked against the signed-in user and then taken
 * (single use, so two concurrent approvals give one code).
 */
async function takeConsent(ctx: Context, interactionId: string, request: OAuthRequest): Promise<InteractionRecord | AuthorizeDecision> {
  if (!validId(interactionId)) return errorPage('invalid_request', EXPIRED);
  const idHash = sha256Base64url(interactionId);
  const found = await ctx.storage.findInteraction(idHash);
  if (!found || found.kind !== 'consent' || ctx.clock.now() >= found.expiresAt) return errorPage('invalid_request', EXPIRED);
  const session = await ctx.sessions.current(request);
  if (!session || session.account.uuid !== found.account?.uuid) {
    return errorPage('invalid_request', 'The signed-in account is not the one this authorization was shown to.');
  }
  if (!sessionMeets(ctx, found, session, ctx.clock.now())) return errorPage('invalid_request', STALE_SIGN_IN);
  const taken = await ctx.storage.takeInteraction(idHash, ctx.clock.now());
  return taken ?? errorPage('invalid_request', EXPIRED);
}

/** The user authorized the application. */
export async function approve(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const record = await takeConsent(ctx, interactionId, request);
    if ('type' in record) return record;
    const client = await ctx.storage.findClient(record.request.clientId);
    if (!client || !record.account) return errorPage('invalid_client', 'The application (client_id) is not known.');
    const now = ctx.clock.now();
    await ctx.storage.saveConsent({ accountUuid: record.account.uuid, clientId: client.id, scope: record.request.scope, grantedAt: now });
    audit(ctx, { type: 'consent.granted', clientId: client.id, accountUuid: record.account.uuid, scope: record.request.scope });
    return await issue(ctx, client, record.request, record.account, now);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/** The user denied the application: `access_denied` back to the callback (SPEC 7.1). */
export async function deny(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const record = await takeConsent(ctx, interactionId, request);
    if ('type' in record) return record;
    audit(ctx, { type: 'consent.denied', clientId: record.request.clientId, accountUuid: record.account?.uuid ?? '' });
    return redirectError(record.request, modeOf(record.request), ctx, 'access_denied', 'The user denied the authorization request.');
  } catch (error) {
    return pageFailure(ctx, error);
  }
}
