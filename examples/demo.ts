/**
 * `npm run demo`: Nimbus, a demo cloud platform using authgate, on http://127.0.0.1:3000, and
 * StatusBoard, a third-party app using it, on http://127.0.0.1:3001. Everything is in memory,
 * unless DATABASE_URL is set (see platform/storage.ts). Environment: HOST, PLATFORM_PORT, APP_PORT.
 * What stops it from starting (a port in use, a bad DATABASE_URL) is one line on stderr, exit 1.
 */
import { startDemo } from './start-demo.js';
import { chooseStorage } from './platform/storage.js';
import { DEMO_USERS } from './platform/sign-in.js';

/** One line on stderr and exit 1: what went wrong is in the message, a stack trace would bury it. */
function cannotStart(message: string): never {
  console.error(`The demo cannot start: ${message}`);
  process.exit(1);
}

const { storage, close } = await chooseStorage().catch((error: Error) =>
  cannotStart(`DATABASE_URL: ${error.message} (unset DATABASE_URL to keep everything in memory)`),
);
const demo = await startDemo({
  host: process.env.HOST ?? '127.0.0.1',
  platformPort: Number(process.env.PLATFORM_PORT ?? 3000),
  appPort: Number(process.env.APP_PORT ?? 3001),
  storage,
}).catch(async (error: NodeJS.ErrnoException) => {
  await close();
  cannotStart(`${error.message}${error.code === 'EADDRINUSE' ? ' (set PLATFORM_PORT / APP_PORT to use other ports)' : ''}`);
});

console.log(`
  Nimbus, the platform (authgate inside):  ${demo.platformUrl}/
  StatusBoard, a third-party app:          ${demo.appUrl}/

  Demo accounts:
${DEMO_USERS.map((u) => `    ${u.account.email.padEnd(18)} password ${u.password}`).join('\n')}

  Open ${demo.appUrl}/ and click "Connect with Nimbus": sign in, authorize, then call the API,
  refresh and revoke. Or click "Sign in with Nimbus" (OpenID Connect): StatusBoard signs you in
  with an ID token. On Nimbus, see "Authorized applications", "API tokens" and "Developer".
  ID tokens: signed with an RS256 key made for this process (no key to configure; development
  only: a restart makes a new key). Discovery: ${demo.platformUrl}/.well-known/openid-configuration
  StatusBoard's client ID: ${demo.client.clientId}
  Sign a terminal in (device grant, RFC 8628):  NIMBUS_URL=${demo.platformUrl} npm run example:cli -- ${demo.cli.clientId}
  OAuth data: ${process.env.DATABASE_URL !== undefined ? 'PostgreSQL (DATABASE_URL)' : 'in memory (set DATABASE_URL for PostgreSQL)'}.
  Ctrl-C stops both.
`);

const stop = async () => {
  await demo.close();
  await close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
