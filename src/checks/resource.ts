import type { Context } from '../context.js';
import { OAuthError } from '../errors.js';
import { isResourceIndicator } from './audience.js';

/**
 * Resource indicators (RFC 8707): the `resource` values of an authorization or token request,
 * checked, and narrowed against what was granted. Which resources the server issues for is the
 * host's `acceptResource`, by default the resources it protects (`knownResources`). The rules
 * and their answers are listed in docs/reference.md#resource-indicators-rfc-8707.
 */

/** At most this many `resource` values per request: nothing unbounded reaches the host's check or storage. */
const MAX_RESOURCES = 20;

/**
 * Whether the server issues tokens for `resource`: the host's `acceptResource`, else whether it
 * is the identifier of one of the `protectedResources` (RFC 9728), compared as exact strings.
 */
function accepts(ctx: Context, resource: string): boolean {
  const accept = ctx.options.acceptResource;
  if (accept) return accept(resource) === true;
  return ctx.options.protectedResources?.some((known) => known.resource === resource) === true;
}

/** Why requested resources were refused, for `invalid_target` (RFC 8707 §2). */
export interface ResourceProblem {
  /** The `error_description`; fixed texts, which never echo the value. */
  message: string;
}

const MALFORMED: ResourceProblem = { message: 'Each resource must be an absolute URI without a fragment (RFC 8707).' };
const TOO_MANY: ResourceProblem = { message: `At most ${MAX_RESOURCES} resource values may be requested.` };
const UNKNOWN: ResourceProblem = { message: 'This server does not issue tokens for the requested resource.' };
const NOT_GRANTED: ResourceProblem = { message: 'The requested resource exceeds the resources granted.' };

/**
 * The resources a request asks for (its `resource` values, empty ones left out, each kept once,
 * in the order sent), checked: each well formed, and each either among `granted` (the
 * resources of the code or refresh token being used: a request may narrow them, never widen,
 * RFC 8707 §2.2) or, when nothing was granted, one the server issues for. `undefined` when none
 * was sent: the caller's behaviour without resource indicators.
 */
export function requestedResources(
  ctx: Context,
  values: readonly string[] | undefined,
  granted: readonly string[] | undefined,
): string[] | ResourceProblem | undefined {
  if (values === undefined) return undefined;
  const resources: string[] = [];
  for (const value of values) if (value !== '' && !resources.includes(value)) resources.push(value);
  if (resources.length === 0) return undefined;
  if (resources.length > MAX_RESOURCES) return TOO_MANY;
  if (!resources.every(isResourceIndicator)) return MALFORMED;
  for (const resource of resources) {
    if (granted ? !granted.includes(resource) : !accepts(ctx, resource)) return granted ? NOT_GRANTED : UNKNOWN;
  }
  return resources;
}

/** Whether `requestedResources` refused the request. */
export const isResourceProblem = (value: string[] | ResourceProblem | undefined): value is ResourceProblem =>
  value !== undefined && !Array.isArray(value);

/**
 * The audience of the access token a code exchange or refresh issues (RFC 8707 §2.2): the
 * `resource` values sent, each among `granted` (the code's or refresh token's resources; when
 * those are absent, each one the server issues for), or all of `granted` when none was sent.
 * Throws `invalid_target` (400).
 */
export function accessAudience(ctx: Context, values: readonly string[], granted: string[] | undefined): string[] | undefined {
  const requested = requestedResources(ctx, values, granted);
  if (isResourceProblem(requested)) throw new OAuthError('invalid_target', requested.message);
  return requested ?? granted;
}
