/**
 * The English catalogue of the built-in pages (docs/reference.md#branding-and-languages): every
 * user-visible string of the consent, error and device pages. It is the reference catalogue: every other
 * catalogue has exactly its keys and, per key, the same `{placeholders}`. Values are plain text:
 * the pages HTML-escape them, then put the (escaped) values in place of the placeholders.
 * To add a page's strings, add keys here and in every other catalogue (test/core/messages.test.ts
 * checks they agree).
 */
export const en = {
  /** The `<title>` suffix and the line at the top naming the platform. */
  titleWithSite: '{title} · {site}',
  /** Names the platform in sentences when there is no site name. */
  thisSite: 'This site',

  errorTitle: 'Authorization error',
  errorHeading: 'This authorization request cannot be completed',
  errorCode: 'Error code: {code}',
  /** Before the server's own (English) description, on pages in another language. */
  errorDetail: 'Technical detail (in English): {description}',
  errorAdvice: 'Go back to the application and try again, or contact its developer.',

  consentTitle: 'Authorize {client}',
  consentTitleUnverified: 'Authorize {client} (unverified)',
  consentHeading: 'Authorize {client}?',
  consentHeadingUnverified: 'Authorize {client} (unverified)?',
  signedInAs: 'Signed in as {name} ({email}).',
  useAnotherAccount: 'Use another account',
  asksTo: 'This application asks to:',
  forUseAt: 'For use at:',
  sentTo: 'After you decide, you will be sent to {host}.',
  unverifiedNotice: '{site} has not verified this application: its name and details are what it says about itself.',
  clientIdPublishedBy: 'Its client ID is published by {host}.',
  homePage: 'It gives {uri} as its home page (not checked).',
  authorize: 'Authorize',
  deny: 'Deny',
  revokeAnyTime: 'You can revoke this access at any time.',
  /** The same sentence when the host gives its authorized-apps page: `{link}` is the link's text. */
  revokeAnyTimeLinked: 'You can revoke this access at any time in {link}.',
  authorizedAppsLink: 'your authorized applications',
  logoAlt: '{site} logo',

  /** The device verification pages (RFC 8628 §3.3; docs/reference.md#verification-page). */
  deviceEntryTitle: 'Connect a device',
  deviceEntryIntro: 'Enter the code shown on your device (a TV, a command-line tool, another app).',
  deviceCodeLabel: 'Your code',
  deviceContinue: 'Continue',
  deviceWrongCode: 'That code is not valid: it may be mistyped, expired or already used. Check the code on your device and try again.',
  deviceLockedTitle: 'Too many wrong codes',
  /** `{time}`: when the lock ends, `HH:MM UTC`. */
  deviceLocked: 'Too many wrong codes were entered. Try again after {time}.',
  deviceConfirmTitle: 'Connect {client}',
  deviceConfirmTitleUnverified: 'Connect {client} (unverified)',
  deviceConfirmHeading: 'Connect {client}?',
  deviceConfirmHeadingUnverified: 'Connect {client} (unverified)?',
  deviceUnverifiedNotice: '{site} has not verified this application: its name is what it says about itself.',
  deviceCodeShown: 'Code: {code}',
  /** The warning of RFC 8628 §5.4 (remote phishing). */
  deviceWarning:
    'Only continue if you started this on your own device and the code above matches the code it shows. If someone else sent you this code or link, deny: they would get access to your account.',
  deviceAsksTo: 'The device asks to:',
  deviceApprove: 'Connect',
  deviceApprovedTitle: 'Device connected',
  deviceApproved: 'Your device is connected. You can return to it now; it may take a few seconds to continue.',
  deviceDeniedTitle: 'Device not connected',
  deviceDenied: 'You denied access. The device was not connected.',

  /** The end-session endpoint's pages (RP-Initiated Logout 1.0; docs/reference.md#rp-initiated-logout). */
  logoutTitle: 'Sign out',
  logoutHeading: 'Sign out of {site}?',
  logoutAskedBy: '{client} asks to sign you out.',
  logoutAskedByUnverified: '{client} (unverified) asks to sign you out.',
  logoutAdvice: 'If you did not ask to sign out, close this page: you stay signed in.',
  logoutConfirm: 'Sign out',
  signedOutTitle: 'Signed out',
  signedOut: 'You are signed out of {site}. You can close this page.',
  logoutErrorTitle: 'Sign-out error',
  logoutErrorHeading: 'This sign-out request cannot proceed',

  /** What each scope value of the default vocabulary means (docs/reference.md#scope); hosts add their own. */
  scopes: {
    read: 'See your account and resources (read-only).',
    write: 'Create, change and delete resources in your account.',
    // OpenID Connect (the `openid` option): a sign-in, and the claims each scope shares (Core §5.4).
    openid: 'Sign you in with your account (your account identifier).',
    profile: 'See your profile: name, picture and other public details.',
    email: 'See your email address.',
    address: 'See your postal address.',
    phone: 'See your phone number.',
  } as Record<string, string>,
  /**
   * One sentence per error code, for pages in a language other than English (the server's own
   * descriptions are English); `default` for any other code.
   */
  errors: {
    default: 'The request could not be completed.',
    invalid_request: 'The request is missing something, or is malformed, or has expired.',
    invalid_client: 'The application is unknown or no longer exists.',
    invalid_redirect_uri: 'The address the application asked to return to is not one it registered.',
    invalid_scope: 'The application asked for access that does not exist.',
    unauthorized_client: 'The application may not make this kind of request.',
    unsupported_response_type: 'The application asked for a kind of answer this server does not give.',
    invalid_target: 'The application asked for access to a service this server does not know.',
    access_denied: 'The access was refused.',
    server_error: 'The server could not complete the request. Try again later.',
    temporarily_unavailable: 'The server is temporarily unavailable. Try again later.',
  } as Record<string, string>,
};

/**
 * The keys of the plain strings of a catalogue (every one but `scopes` and `errors`).
 * @group Pages
 */
export type MessageKey = Exclude<keyof typeof en, 'scopes' | 'errors'>;

/**
 * Every user-visible string of the built-in pages, in one language: plain text with
 * `{placeholders}` (docs/reference.md#branding-and-languages). `scopes`: the words for each scope
 * value; `errors`: a sentence per error code, `default` for the others.
 * @group Pages
 */
export type Messages = { [K in MessageKey]: string } & {
  scopes: Record<string, string>;
  errors: Record<string, string>;
};

/**
 * What a host gives for one language (the `pages.messages` option): any strings of `Messages`,
 * layered over the shipped catalogue of that language, or over English.
 * @group Pages
 */
export type MessagesInput = Partial<{ [K in MessageKey]: string }> & {
  scopes?: Record<string, string>;
  errors?: Record<string, string>;
};
