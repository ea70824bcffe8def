import { randomToken, timingSafeEqual } from './crypto.js';
import { errorPage } from './endpoints/failure.js';
import { queryParams, requestParams, single } from './http.js';
import { decisionResponse, renderConsentPage } from './pages.js';
import type { AuthorizationServer } from './server.js';
import type { AuthorizeDecision, OAuthRequest, OAuthResponse } from './types.js';

/**
 * The default handling of `login` and `consent` decisions that every adapter shares, so the
 * adapters only translate requests and responses:
 * - `login`: 302 to the host's `loginUrl` with `?interaction=<id>`; after signing the user in the
 *   host sends the browser to `GET {basePath}/authorize/resume?interaction=<id>`.
 * - `consent`: the built-in consent page, which posts to `POST {basePath}/authorize/decision`,
 *   with a "Use another account" link to `loginUrl?interaction=<id>` (resuming a consent
 *   interaction asks the consent anew of whoever is signed in then).
 *   The form is protected against CSRF twice: the unguessable interaction id only ever appears
 *   in the page body, and a double-submit cookie must match the form's `csrf` field. `approve`
 *   and `deny` also check that the signed-in user is the one the page was shown to.
 */

export interface InteractionUiOptions {
  /** Where the host signs users in. Default `/login`. */
  loginUrl?: string;
  /** Where the OAuth routes are mounted. Default `/v1/oauth`. */
  basePath?: string;
  /** The platform's name, shown on the consent and error pages. */
  siteName?: string;
}

/** The double-submit cookie of the consent form. */
export const CSRF_COOKIE = 'authgate_csrf';

function cookie(request: OAuthRequest, name: string): string | undefined {
  const raw = request.headers['cookie'];
  for (const line of Array.isArray(raw) ? raw : raw ? [raw] : []) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
    }
  }
  return undefined;
}

// Adapters pass an absolute URL when they know the scheme; proxy headers are not trusted here.
const isHttps = (request: OAuthRequest) => request.url.startsWith('https:');

/** Default response for any decision. */
export function interactionResponse(decision: AuthorizeDecision, request: OAuthRequest, options: InteractionUiOptions = {}): OAuthResponse {
  const basePath = options.basePath ?? '/v1/oauth';
  switch (decision.type) {
    case 'redirect':
    case 'error':
      return decisionResponse(decision, request, options);
    case 'login': {
      const loginUrl = options.loginUrl ?? '/login';
      const sep = loginUrl.includes('?') ? '&' : '?';
      return {
        status: 302,
        headers: { location: `${loginUrl}${sep}interaction=${encodeURIComponent(decision.interaction.id)}`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
        body: '',
      };
    }
    case 'consent': {
      const existing = cookie(request, CSRF_COOKIE);
      const csrfToken = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken();
      const loginUrl = options.loginUrl ?? '/login';
      const switchAccountUrl = `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}interaction=${encodeURIComponent(decision.interaction.id)}`;
      const response = renderConsentPage(decision.interaction, { action: `${basePath}/authorize/decision`, csrfToken, switchAccountUrl, ...(options.siteName !== undefined && { siteName: options.siteName }) });
      response.headers['set-cookie'] =
        `${CSRF_COOKIE}=${csrfToken}; Path=${basePath}/authorize; HttpOnly; SameSite=Lax${isHttps(request) ? '; Secure' : ''}`;
      return response;
    }
  }
}

/** `GET {basePath}/authorize/resume?interaction=<id>` */
export async function handleResume(server: AuthorizationServer, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const { interaction } = single(queryParams(request), ['interaction'] as const);
    return await server.resume(interaction ?? '', request);
  } catch {
    return errorPage('invalid_request', 'The interaction parameter is missing or was sent more than once.');
  }
}

/** `POST {basePath}/authorize/decision` with `interaction`, `csrf` and `decision=approve|deny`. */
export async function handleDecisionForm(server: AuthorizationServer, request: OAuthRequest): Promise<AuthorizeDecision> {
  let form: Partial<Record<'interaction' | 'csrf' | 'decision', string>>;
  try {
    if (request.method.toUpperCase() !== 'POST') throw new Error('method');
    form = single(requestParams(request), ['interaction', 'csrf', 'decision'] as const);
  } catch {
    return errorPage('invalid_request', 'The authorization form was malformed. Start again from the application.');
  }
  const expected = cookie(request, CSRF_COOKIE);
  if (!form.csrf || !expected || !timingSafeEqual(form.csrf, expected)) {
    return errorPage('invalid_request', 'The authorization form could not be verified (missing or wrong CSRF token). Start again from the application.', 403);
  }
  if (form.decision === 'approve') return server.approve(form.interaction ?? '', request);
  if (form.decision === 'deny') return server.deny(form.interaction ?? '', request);
  return errorPage('invalid_request', "The decision must be 'approve' or 'deny'.");
}
