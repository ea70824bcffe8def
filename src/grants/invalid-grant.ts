import { OAuthError } from '../errors.js';

// RFC 6749 §5.2's own definition of `invalid_grant`, the same whichever of the reasons it was.
const INVALID_GRANT = 'The grant is invalid, expired, revoked, does not match the redirection URI, or was issued to another client.';

/** `invalid_grant` (RFC 6749 §5.2): the code or refresh token cannot be used, for whatever reason. */
export const invalidGrant = () => new OAuthError('invalid_grant', INVALID_GRANT);
