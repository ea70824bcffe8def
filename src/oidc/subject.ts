/**
 * The `sub` claim (OpenID Connect Core §2, §8): an identifier of the account, stable, never
 * reassigned, at most 255 ASCII characters. Public by default: the same for every client (the
 * account's uuid, or what the host's function maps it to). Pairwise on request (Core §8.1): a
 * different `sub` per sector, so clients of different sectors cannot tell they see the same user.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { Account } from '../types.js';
import { base64url } from '../crypto.js';
import { ConfigError } from '../errors.js';

/** Core §8: the subject identifier types. */
export type SubjectType = 'public' | 'pairwise';

/** The subject options of the OpenID Provider. */
export interface SubjectOptions {
  /**
   * The account's `sub` for every client (the local identifier pairwise subjects derive from).
   * Default: `account.uuid`. It must never change for an account nor be given to another one
   * (Core §2), and be 1 to 255 ASCII characters.
   */
  subject?: (account: Account) => string;
  /**
   * Pairwise subjects (Core §8.1) for clients registered with `subject_type: 'pairwise'`:
   * `salt` is a secret of at least 32 characters, the same on every instance and for ever
   * (another salt gives every user another `sub` at every pairwise client).
   */
  pairwise?: { salt: string };
}

/** Core §2: "It MUST NOT exceed 255 ASCII characters in length." Printable ASCII here. */
const SUBJECT = /^[\x21-\x7e]{1,255}$/;

/**
 * The sector of a client (Core §8.1): the host component of its redirect URI (authgate clients
 * have one, so no `sector_identifier_uri` is needed). A private-use scheme (`com.example.app:/cb`,
 * RFC 8252 §7.1) has no host: its scheme, a reversed domain name, is the sector. Loopback
 * clients (`http://127.0.0.1/cb`, RFC 8252 §7.3) all share the sector `127.0.0.1`.
 * @throws TypeError for a redirect URI that is not a URL.
 */
export function sectorIdentifier(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.hostname !== '' ? url.hostname.toLowerCase() : url.protocol.slice(0, -1).toLowerCase();
}

/**
 * Core §8.1's example, `base64url(SHA-256(sector || local sub || salt))`, with a space between
 * sector and local sub: a sector (a host name or a scheme) has no space, so the input splits one
 * way only, and two (sector, account) pairs cannot meet on the same bytes.
 */
export function pairwiseSubject(sector: string, localSubject: string, salt: string): string {
  return base64url(sha256(new TextEncoder().encode(`${sector} ${localSubject}${salt}`)));
}

/** The subjects of one provider: public, and pairwise when the option is on. */
export class Subjects {
  /** For `subject_types_supported` (Discovery 1.0 §3). */
  readonly types: readonly SubjectType[];

  /** @throws ConfigError naming `option` (`openid.pairwise.salt`) for a short salt or a `subject` that is not a function. */
  constructor(
    private readonly options: SubjectOptions = {},
    option = 'openid',
  ) {
    if (options.subject !== undefined && typeof options.subject !== 'function')
      throw new ConfigError(`${option}.subject`, 'expected a function');
    const salt = options.pairwise?.salt;
    if (options.pairwise !== undefined && (typeof salt !== 'string' || salt.length < 32))
      throw new ConfigError(`${option}.pairwise.salt`, 'expected a secret of at least 32 characters');
    this.types = options.pairwise ? ['public', 'pairwise'] : ['public'];
  }

  /**
   * The account's local `sub`.
   * @throws TypeError when the host's function returns something that cannot be a `sub`.
   */
  local(account: Account): string {
    const sub = this.options.subject ? this.options.subject(account) : account.uuid;
    if (typeof sub !== 'string' || !SUBJECT.test(sub))
      throw new TypeError('authgate: subject: expected 1 to 255 printable ASCII characters');
    return sub;
  }

  /**
   * The `sub` a client sees: the local one, or for a pairwise client the pairwise one of its
   * sector. Userinfo and every ID token of the client must use this same value (Core §5.3.2).
   * @throws TypeError for a pairwise client when pairwise subjects are off.
   */
  for(account: Account, client: { redirectUri: string; subjectType?: SubjectType | undefined }): string {
    const local = this.local(account);
    if (client.subjectType !== 'pairwise') return local;
    if (!this.options.pairwise) throw new TypeError('authgate: subject: a pairwise client, but pairwise subjects are off');
    return pairwiseSubject(sectorIdentifier(client.redirectUri), local, this.options.pairwise.salt);
  }
}
