/**
 * authgate: an embeddable OAuth 2.0 authorization server.
 * @packageDocumentation
 * @module authgate
 */
export { AuthorizationServer } from './server.js';
export type { ClientTypes, ClientUpdate } from './management.js';
export type { InteractionDescription } from './interactions/describe.js';
export type { AuthorizationServerOptions, ResolvedOptions } from './options.js';
export { MemoryStorage } from './storage/memory.js';
export type * from './storage/types.js';
export { DEVICE_CODE_GRANT, MAX_CONSENT_APPROVALS, MAX_REFRESH_WINDOW_SECONDS } from './storage/types.js';
export {
  ACCOUNT_ADMINISTRATION_METHODS,
  CLIENT_ADMINISTRATION_METHODS,
  COMBINED_APPROVAL_METHODS,
  COMBINED_READ_METHODS,
  CORE_STORAGE_METHODS,
  DEVICE_STORAGE_METHODS,
  DPOP_PROOF_METHODS,
  PERSONAL_TOKEN_METHODS,
  REFRESH_RETRY_METHODS,
  STORAGE_GROUPS,
} from './storage/groups.js';
export type { UserCodeOutcome } from './device/device-authorization.js';
export {
  renderDeviceEntryPage,
  renderDeviceConfirmPage,
  renderDeviceLockedPage,
  renderDeviceResultPage,
} from './ui/device-pages.js';
export type * from './types.js';
export { OAuthError, ConfigError, isOAuthError, type OAuthErrorCode } from './errors.js';
export { systemClock } from './clock.js';
export {
  escapeHtml,
  renderErrorPage,
  renderConsentPage,
  decisionResponse,
  formPostResponse,
  PAGE_HEADERS,
  type PageOptions,
} from './ui/pages.js';
export { negotiateLanguage, type PagesOptions, type ResolvedPages } from './ui/page-settings.js';
export { SHIPPED_MESSAGES, type Messages, type MessageKey, type MessagesInput } from './ui/messages/index.js';
export { parseScope, formatScope, requiredScope, ScopePolicy, type ScopeOptions } from './checks/scope.js';
export { PATHS, type MetadataOptions } from './endpoints/metadata.js';
export type { MetadataFetcher, MetadataFetchLimits, MetadataResponse } from './client-metadata/metadata-fetcher.js';
export {
  interactionResponse,
  pageOptions,
  handleAuthorize,
  handleResume,
  handleDecisionForm,
  CSRF_COOKIE,
  type InteractionUiOptions,
  type AuthorizeHandling,
} from './ui/interaction-routes.js';
export {
  oauthRoutes,
  routeWhere,
  checkAdapterOptions,
  checkServer,
  ADAPTER_OPTIONS,
  answerRoute,
  serveRoute,
  bodyErrorResponse,
  bodyTooLarge,
  bodyUnreadable,
  BodyError,
  DEFAULT_BASE_PATH,
  DEFAULT_BODY_LIMIT,
  type AdapterHooks,
  type AdapterIo,
  type AdapterOptions,
  type OAuthRoute,
  type RouteResult,
  type RouteWhere,
} from './adapter-kit.js';
export { forwardedScheme, fromTrustedProxy, secureCookies, type TrustProxyOptions } from './proxy.js';
export { RATE_LIMITED_ENDPOINTS, basicClientId, rateLimitKey, tooManyRequests } from './rate-limit.js';
export { bindBrowser, BROWSER_COOKIE, readCookie, type BrowserBinding, type BrowserBindingOptions } from './checks/browser-binding.js';
export { generateSigningKey } from './keys/generate.js';
export type { SigningAlgorithm, SigningJwk } from './keys/jwk.js';
export type { ClientOpenIdInput } from './oidc/client-fields.js';
export type { EndSessionUi } from './oidc/logout.js';
export { renderLogoutConfirmPage, renderSignedOutPage, renderLogoutErrorPage, type LogoutClient } from './ui/logout-pages.js';
