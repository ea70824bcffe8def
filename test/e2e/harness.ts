/**
 * Browser end-to-end harness: the whole demo (Nimbus + StatusBoard, examples/start-demo.ts) on
 * free ports of 127.0.0.1, in this process, on MemoryStorage; and Debian's Chromium driven by
 * playwright-core (no browser is ever downloaded). Each test gets a fresh browser context, that
 * is a fresh cookie jar: a new user at a new browser. Screenshots go to test-results/e2e/
 * (git-ignored; not taken in CI, see `TAKE_SCREENSHOTS`).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startDemo } from '../../examples/start-demo.js';
import { DEMO_USERS } from '../../examples/platform/sign-in.js';
import { MemoryStorage } from '../../src/index.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Locally without Chromium the suite is skipped; in CI (CI set) it always runs, and fails if Chromium is missing. */
export const browserAvailable = existsSync(CHROMIUM) || Boolean(process.env.CI);
if (!browserAvailable) {
  console.warn(
    `Browser tests skipped: ${CHROMIUM} is missing. \`npm run setup:test\` installs Debian's Chromium (and PostgreSQL) with apt-get.`,
  );
}
/** Per test: a browser on two shared cores, next to the rest of the suite, can be slow. */
export const E2E_TIMEOUT = 90_000;
export const SCREENSHOTS = join(process.cwd(), 'test-results', 'e2e');

export const [ADA, BOB] = DEMO_USERS.map((u) => ({ ...u.account, password: u.password })) as [
  { email: string; password: string; name: string; uuid: string },
  { email: string; password: string; name: string; uuid: string },
];
export type User = typeof ADA;

type Demo = Awaited<ReturnType<typeof startDemo>>;

let launched: Promise<Browser> | undefined;

/**
 * The worker's Chromium: launched by the first browser file that a worker runs, and used by the
 * next ones (the `shared` project of vitest.config.ts runs them in one process); a launch and a
 * close cost about 1.5 s per file. Each test still gets a fresh context (cookies, storage, cache),
 * and `closeContexts` ends a file's. Playwright ends the browser when the worker process exits.
 */
export function workerBrowser(): Promise<Browser> {
  launched ??= chromium
    .launch({
      executablePath: CHROMIUM,
      headless: true,
      // Playwright gives every launch a fresh temporary profile (user data dir) of its own.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
    })
    .then((browser) => {
      browser.on('disconnected', () => {
        launched = undefined;
      });
      return browser;
    });
  return launched;
}

/** At the end of a file: close every context it left open on the worker's browser (the next file starts with none). */
export async function closeContexts(browser: Browser): Promise<void> {
  await Promise.all(browser.contexts().map((context) => context.close()));
}

/** Start the demo once per file, on the worker's browser; a fresh context per `newPage()`, closed after each test. */
export function useBrowserDemo() {
  let demo: Demo;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    demo = await startDemo({ platformPort: 0, appPort: 0, storage: new MemoryStorage() });
    browser = await workerBrowser();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    if (browser) await closeContexts(browser);
    await demo?.close();
  });

  return {
    get platformUrl() {
      return demo.platformUrl;
    },
    get appUrl() {
      return demo.appUrl;
    },
    get demo() {
      return demo;
    },
    get browser() {
      return browser;
    },
    async newPage(): Promise<Page> {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      context.setDefaultTimeout(20_000);
      contexts.push(context);
      return context.newPage();
    },
  };
}

/**
 * Whether the tests take their screenshots (test-results/e2e/, to look at; no test reads them).
 * Yes by default; not in CI (`CI` set), whose checkout is thrown away with them: a full-page
 * screenshot costs Chromium a layout and a PNG encoding: 13% of the browser files' time (14.5 s of
 * 112 s in four of them).
 * `AUTHGATE_SCREENSHOTS=1` takes them in CI too, `AUTHGATE_SCREENSHOTS=0` skips them anywhere.
 */
export const TAKE_SCREENSHOTS = process.env['AUTHGATE_SCREENSHOTS'] ? process.env['AUTHGATE_SCREENSHOTS'] !== '0' : !process.env['CI'];

/** A full-page screenshot of `page` at `path` (a .png), if screenshots are taken (`TAKE_SCREENSHOTS`). */
export async function screenshot(page: Page, path: string): Promise<void> {
  if (TAKE_SCREENSHOTS) await page.screenshot({ path, fullPage: true });
}

/** A full-page screenshot, to look at: test-results/e2e/<name>.png (see `TAKE_SCREENSHOTS`). */
export async function shot(page: Page, name: string): Promise<void> {
  await screenshot(page, join(SCREENSHOTS, `${name}.png`));
}

/** Click something that navigates (a link, a form button) and wait until the next page has loaded. */
export async function navigate(page: Page, target: Locator): Promise<void> {
  await Promise.all([page.waitForEvent('load'), target.click()]);
}

/** On the platform's sign-in page, in whichever language it speaks: sign in. */
export async function signIn(page: Page, user: User): Promise<void> {
  await page.locator('#email').fill(user.email);
  await page.locator('#password').fill(user.password);
  await navigate(page, page.locator('form[action="/login"] button'));
}

/** The text of an element, white space collapsed. */
export const text = async (page: Page, selector: string) =>
  ((await page.locator(selector).textContent()) ?? '').replace(/\s+/g, ' ').trim();
export const json = async <T = Record<string, unknown>>(page: Page, selector: string) =>
  JSON.parse((await page.locator(selector).textContent()) ?? '') as T;

/** A failure as StatusBoard shows it in `#result`: the OAuth error code and the server's description, as read on the page. */
export async function failure(page: Page): Promise<{ code: string; description: string; sentence: string }> {
  const description = page.locator('#result .error-description');
  return {
    code: await text(page, '#result .error-code'),
    description: (await description.count()) ? await text(page, '#result .error-description') : '',
    sentence: await text(page, '#result .failure'),
  };
}

/** Every page the browser showed (committed navigations of the main frame), to prove a flow showed none of the platform's. */
export function pagesShown(page: Page): string[] {
  const urls: string[] = [];
  page.on('framenavigated', (frame) => frame === page.mainFrame() && urls.push(frame.url()));
  return urls;
}

/** A token response as StatusBoard shows it (`#token-response`): the token endpoint's answer. */
export interface ShownTokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  info: { name: string; email: string; uuid: string };
}

/** The implicit flow's fragment as StatusBoard's script shows it (`#implicit-output`): every value a string. */
export interface ShownFragment {
  access_token: string;
  token_type: string;
  expires_in: string;
  scope: string;
  state: string;
  refresh_token?: string;
}

/**
 * From StatusBoard's home page: "Connect with Nimbus", sign in if asked, Authorize; back on
 * StatusBoard, connected. Returns the token response the app shows.
 */
export async function connect(page: Page, appUrl: string, user: User): Promise<ShownTokens> {
  await page.goto(`${appUrl}/`);
  await navigate(page, page.locator('#connect'));
  if (new URL(page.url()).pathname === '/login') await signIn(page, user);
  await navigate(page, page.getByRole('button', { name: 'Authorize' }));
  if (!page.url().startsWith(`${appUrl}/`)) throw new Error(`expected to be back on the app, at ${page.url()}`);
  return json<ShownTokens>(page, '#token-response');
}
