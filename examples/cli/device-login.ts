/**
 * `npm run example:cli -- <client id>`: sign a terminal in to Nimbus with the device authorization
 * grant (RFC 8628), using openid-client, a client library that implements it. The CLI shows a
 * short code and a URL; you open the URL in any browser (a phone will do), sign in, enter the
 * code and connect; the CLI, polling meanwhile, gets its tokens and calls the API.
 *
 * `npm run demo` registers the public client "Nimbus CLI" with the device grant and prints the
 * command with its client ID. Environment: NIMBUS_URL (default http://127.0.0.1:3000).
 */
import * as oidc from 'openid-client';

const issuer = process.env.NIMBUS_URL ?? 'http://127.0.0.1:3000';
const clientId = process.argv[2] ?? process.env.NIMBUS_CLIENT_ID;
if (!clientId) {
  console.error('Usage: npm run example:cli -- <client id>   (npm run demo prints it)');
  process.exit(2);
}

// A public client: client_id alone. Plain http only for a loopback demo server.
const loopback = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(issuer);
const config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), {
  algorithm: 'oauth2', // RFC 8414 metadata: /.well-known/oauth-authorization-server
  ...(loopback && { execute: [oidc.allowInsecureRequests] }),
});

const started = await oidc.initiateDeviceAuthorization(config, { scope: 'read' });
console.log(`
  To sign this terminal in, open   ${started.verification_uri}
  and enter the code               ${started.user_code}

  (or open ${started.verification_uri_complete})
  Waiting for you to connect it...`);

try {
  const tokens = await oidc.pollDeviceAuthorizationGrant(config, started);
  const account = await oidc.fetchProtectedResource(config, tokens.access_token, new URL('/v2/account', issuer), 'GET');
  console.log(`\n  Signed in. GET /v2/account answered ${account.status}:\n  ${await account.text()}\n`);
} catch (error) {
  const code = (error as { error?: string }).error;
  console.error(`\n  Not signed in: ${code ?? (error as Error).message}\n`);
  process.exit(1);
}
