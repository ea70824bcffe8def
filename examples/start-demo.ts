/**
 * Starts the whole demo in one process: Nimbus (the platform, with authgate) and StatusBoard (a
 * third-party app, a separate web app on another port that only talks HTTP to Nimbus). StatusBoard
 * is Ada's application on Nimbus, registered at the first start and reused after (platform/demo-clients.ts).
 * `npm run demo` (examples/demo.ts) and the browser tests (test/e2e) both start it from here.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Storage } from '../src/index.js';
import { cliClient, statusBoardClient } from './platform/demo-clients.js';
import { createPlatform } from './platform/platform.js';
import { DEMO_USERS } from './platform/sign-in.js';
import { createThirdPartyApp } from './third-party-app/app.js';

export interface DemoOptions {
  host?: string;
  /** 0: any free port. */
  platformPort?: number;
  appPort?: number;
  storage: Storage;
}

async function listen(port: number, host: string): Promise<{ http: Server; url: string }> {
  const http = createServer();
  http.listen(port, host);
  await once(http, 'listening');
  const address = http.address() as AddressInfo;
  return { http, url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` };
}

export async function startDemo({ host = '127.0.0.1', platformPort = 3000, appPort = 3001, storage }: DemoOptions) {
  // Listen first: each side needs the other's URL (the app's callback URL, the platform's issuer).
  const nimbus = await listen(platformPort, host);
  const statusBoard = await listen(appPort, host).catch((error) => {
    nimbus.http.close();
    throw error;
  });

  const platform = createPlatform({ url: nimbus.url, storage });
  nimbus.http.on('request', platform.app);

  const client = await statusBoardClient(
    platform.server,
    DEMO_USERS[0]!.account.uuid,
    `${statusBoard.url}/callback`,
    `${statusBoard.url}/signed-out`,
  );
  statusBoard.http.on(
    'request',
    await createThirdPartyApp({
      url: statusBoard.url,
      platformUrl: nimbus.url,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      // Registered with the client: StatusBoard's sign-out goes through Nimbus's end_session_endpoint.
      postLogoutRedirectUri: `${statusBoard.url}/signed-out`,
    }),
  );

  // A command-line tool signs in with the device grant (RFC 8628): a public client allowed only that.
  const cli = await cliClient(platform.server);

  return {
    platformUrl: nimbus.url,
    appUrl: statusBoard.url,
    client,
    cli,
    platform,
    async close() {
      for (const { http } of [nimbus, statusBoard]) {
        http.closeAllConnections();
        http.close();
      }
    },
  };
}
