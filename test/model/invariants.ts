/**
 * The invariants the model-based tests check after every step (SECURITY.md, "Model-based tests"),
 * by name. A failure throws an `InvariantViolation` naming the invariant, which fast-check reports
 * with the counterexample (seed, path and command list) so the run can be replayed.
 *
 * While a defect is being fixed, `MODEL_KNOWN_FAILURES=name,name` turns a violation of those
 * invariants into the end of that run (counted and reported, not failed), so the rest of the
 * state machine can still be exercised. The committed tests never set it.
 */

export const INVARIANTS = {
  issuedOnlyToQualifiedSession:
    'A code or token is issued only to a session that meets every requirement of its request: signed in (with a finite sign-in time), ' +
    'the `i` hint matches, `prompt=login` -> signed in after the request, `max_auth_age` -> session young enough when issuing.',
  consentOnlyToQualifiedSession:
    'A consent is shown (by `authorize` or `resume`) only to a session that meets every requirement of the request, and for its own account.',
  nonFiniteSignInIsSignedOut:
    'A session whose sign-in time is not a finite number counts as not signed in (and may be reported through onError).',
  interactionStepRechecksRequest:
    '`approve`/`deny` answer the client only for the account the consent was shown to, when its session still meets every requirement of the request.',
  browserBinding: 'An interaction resumed, approved or denied from another browser never yields a consent page or a code (HTTP).',
  codeSingleUse: 'An authorization code yields tokens at most once.',
  rotatedRefreshNeverYieldsTokens:
    'A rotated refresh token presented again yields tokens only as a retry: its client public (refreshRetryWindowSeconds by default), ' +
    'within 60 s of its rotation, unexpired, and no refresh token minted from it rotated since.',
  replayRevokesLiveFamily:
    'A rotated refresh token presented again revokes its family whenever the family is still live, whatever prune() ran in between.',
  liveRefreshTokensAreSiblings:
    'The refresh tokens of a family that yield tokens are one generation: its newest, or a sibling of it (minted from the same ' +
    'parent by a retry); once one of them is rotated, the others (revoked with their access tokens) never yield tokens again, ' +
    'and presenting one of them revokes the family.',
  boundTokenNeedsItsKey:
    'A DPoP-bound token (RFC 9449) is accepted only with a proof of its key: an access token never as Bearer nor with a proof of ' +
    'another key, a refresh token never without a proof of its key (refused, it is neither rotated nor revoked).',
  scopeNeverWidens: 'Every token carries at most the scope of the request it descends from, and a refresh never widens it.',
  nothingRevokedAuthenticates: 'Nothing revoked (by revoke, revokeAccess, rotation or a replay) ever authenticates or refreshes again.',
  nothingExpiredAuthenticates: 'Nothing expired ever authenticates or refreshes.',
  revocationCoversIssued:
    'Once a revocation (revokeAccess, revokeAllForAccount, revokeClientTokens) returns, nothing of its account or client issued before it ' +
    'works: a code or token stored before the revocation reached the store, or added to a grant it revokes while it ran.',
  audienceRespected:
    'A token issued for named resources (RFC 8707) authenticates only at a check naming one of them, never at one naming none; ' +
    'a refresh or exchange narrows its resources, never widens them.',
  silentOnlyWithinConsent:
    '`prompt=none` issues only when the stored approvals cover the requested scope for every requested resource ' +
    '(or, without `resource`, the approval without one does), across approvals and revocations.',
  personalTokensOfTheirAccount:
    'A personal token is managed only through its own account: `revokePersonalToken` answers true exactly for a live token of that ' +
    "account (false changes nothing); `listPersonalTokens` never lists another account's token, nor one revoked or pruned.",
  deviceCodeSingleUse:
    'A device code yields tokens at most once, only after its approval and before it expires; a redeemed one presented again ' +
    'is `invalid_grant`, and the tokens it gave stay valid.',
  deviceGuessLimit:
    'Wrong user codes are counted per account and per browser: the `maxUserCodeAttempts`-th within `lockSeconds` locks both for ' +
    '`lockSeconds`, during which every code, the right one included, is refused.',
  noFaults: 'No step answers 5xx or throws, and onError is never called except for a deliberate host bug (a non-finite sign-in time).',
  modelAgreement: 'Every answer is one the model allows (the liveness side: good requests succeed).',
} as const;

export type InvariantName = keyof typeof INVARIANTS;

/** A broken invariant. */
export class InvariantViolation extends Error {
  constructor(
    readonly invariant: InvariantName,
    detail: string,
  ) {
    super(`[${invariant}] ${detail}\n  (${INVARIANTS[invariant]})`);
    this.name = 'InvariantViolation';
  }
}

/** A violation of an invariant listed in MODEL_KNOWN_FAILURES: ends the run without failing it. */
export class KnownFailure extends Error {
  constructor(readonly violation: InvariantViolation) {
    super(violation.message);
    this.name = 'KnownFailure';
  }
}

const known = new Set(
  (process.env['MODEL_KNOWN_FAILURES'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** Throw for a broken invariant. */
export function fail(invariant: InvariantName, detail: string): never {
  const violation = new InvariantViolation(invariant, detail);
  throw known.has(invariant) ? new KnownFailure(violation) : violation;
}

/** Assert an invariant; the detail is only built on failure. */
export function check(invariant: InvariantName, ok: boolean, detail: () => string): void {
  if (!ok) fail(invariant, detail());
}
