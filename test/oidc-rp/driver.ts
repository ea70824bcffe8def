/**
 * The relying-party harness: real OpenID Connect client libraries, unmodified, signing a user in
 * at an OpenID Provider over HTTP. Two run in this process (openid-client and oauth4webapi, in
 * `js-rps.ts`); three are small programs run as child processes (`go/`, `python/`, `ruby/`, on
 * Debian's packages). Each reports the same steps (`StepName`), each with the library's own
 * verdict; `problems` then checks the report against the protocol. How to run it and what each
 * program checks: README.md beside this file.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runJsRp } from './js-rps.js';

/** The provider and the client registered there for the relying party. */
export interface RpConfig {
  /** The issuer: discovery is at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** A confidential client, authenticating at the token endpoint with `client_secret_basic`. */
  clientSecret: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  /** Space-separated; must include `openid`, and whatever the provider needs to issue a refresh token. */
  scope: string;
  /**
   * `false` for a provider without RP-initiated logout (authgate until it serves it): the
   * `LOGOUT_STEPS` are not run, and `problems` does not ask for them. Default: run them.
   */
  logout?: false;
}

/** The steps of RP-initiated logout (RP-Initiated Logout 1.0), skipped with `logout: false`. */
export const LOGOUT_STEPS: readonly StepName[] = ['logout', 'silent_after_logout'];

/**
 * Plays the user's browser: given the URL a relying party sends the user to, returns the URL the
 * provider sends the browser back to (at the redirect or post-logout redirect URI). One browser
 * is one user agent: it keeps the provider's session cookies from one call to the next.
 */
export type Browser = (url: string) => Promise<string>;

/** In order; a relying party stops at its first failed step. */
export const STEPS = [
  'discovery',
  'authorize',
  'token',
  'id_token',
  'userinfo',
  'refresh',
  'refresh_id_token',
  'silent',
  'logout',
  'silent_after_logout',
] as const;
export type StepName = (typeof STEPS)[number];
export type Claims = Record<string, unknown>;

export interface StepResult {
  ok: boolean;
  /** The library's own error message, when not ok. */
  error?: string;
  /** The claims the step returned: validated ID token claims, or the userinfo response. */
  claims?: Claims;
}

export interface RpReport {
  rp: RpName;
  library: string;
  /** Every URL the relying party sent the browser to, in order: the first is its authorization request. */
  browsed: string[];
  steps: Partial<Record<StepName, StepResult>>;
  /** A failure outside the library's steps: the browser, a crash, a timeout. */
  error?: string;
}

export const JS_RPS = ['openid-client', 'oauth4webapi'] as const;
export const EXTERNAL_RPS = ['go-oidc', 'authlib', 'ruby-openid-connect'] as const;
export type ExternalRp = (typeof EXTERNAL_RPS)[number];
export type RpName = (typeof JS_RPS)[number] | ExternalRp;

/** What each relying party does: the programs stop after the refresh; prompt=none and logout are the JS ones'. */
export const RP_STEPS: Record<RpName, readonly StepName[]> = {
  'openid-client': STEPS,
  oauth4webapi: STEPS,
  'go-oidc': STEPS.slice(0, 7),
  authlib: STEPS.slice(0, 7),
  'ruby-openid-connect': STEPS.slice(0, 7),
};

/** Run one relying party through its steps against the provider of `config`. */
export function runRp(rp: RpName, config: RpConfig, browser: Browser): Promise<RpReport> {
  return rp === 'openid-client' || rp === 'oauth4webapi' ? runJsRp(rp, config, browser) : runProgram(rp, config, browser);
}

const HERE = fileURLToPath(new URL('.', import.meta.url));
const GOPATH_DEBIAN = '/usr/share/gocode';

/** How each program's toolchain is found, and the Debian packages that bring it (`.ci/setup-test` installs them). */
const TOOLCHAINS: Record<ExternalRp, { present: () => boolean; packages: string }> = {
  'go-oidc': {
    present: () => existsSync('/usr/bin/go') && existsSync(`${GOPATH_DEBIAN}/src/github.com/coreos/go-oidc/oidc.go`),
    packages: 'golang-go golang-github-coreos-go-oidc-dev',
  },
  authlib: {
    present: () => spawnSync('/usr/bin/python3', ['-c', 'import authlib, requests']).status === 0,
    packages: 'python3-authlib python3-requests',
  },
  'ruby-openid-connect': {
    present: () => spawnSync('/usr/bin/ruby', ['-e', 'require "openid_connect"']).status === 0,
    packages: 'ruby ruby-openid-connect',
  },
};

const inCI = /^(1|true|yes)$/i.test(process.env['CI'] ?? '');

/**
 * The relying parties that can run here: all of them in CI (CI=true), where a missing toolchain
 * is an error, never a skip; locally, those whose toolchain is installed, with a warning naming
 * the Debian packages of the others.
 */
export function rpsToTest(): RpName[] {
  testable ??= findTestable();
  return [...testable];
}
let testable: RpName[] | undefined;

function findTestable(): RpName[] {
  const missing = EXTERNAL_RPS.filter((rp) => !TOOLCHAINS[rp].present());
  if (missing.length === 0) return [...JS_RPS, ...EXTERNAL_RPS];
  const message = `OIDC relying parties ${missing.join(', ')}: Debian's ${missing.map((rp) => TOOLCHAINS[rp].packages).join(' ')} missing; \`npm run setup:test\` installs them`;
  if (inCI) throw new Error(`${message}. CI=true: they must run in CI, never skip.`);
  console.warn(`${message}. Those relying parties are skipped.`);
  return [...JS_RPS, ...EXTERNAL_RPS.filter((rp) => !missing.includes(rp))];
}

let goBuild: Promise<string> | undefined;

/**
 * Build the Go program once per process with Debian's Go in GOPATH mode: go-oidc and its
 * dependencies come from Debian's sources in /usr/share/gocode, never from the network.
 */
export function buildGoRp(): Promise<string> {
  goBuild ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'authgate-oidc-rp-go-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const env = {
      PATH: '/usr/bin:/bin',
      HOME: dir,
      GO111MODULE: 'off',
      GOPATH: `${dir}:${GOPATH_DEBIAN}`,
      GOPROXY: 'off',
      GOFLAGS: '',
      GOCACHE: process.env['GOCACHE'] ?? join(tmpdir(), 'authgate-oidc-rp-go-cache'),
    };
    await promisify(execFile)('/usr/bin/go', ['build', '-o', join(dir, 'rp'), join(HERE, 'go', 'rp.go')], { env });
    return join(dir, 'rp');
  })();
  return goBuild;
}

async function programCommand(rp: ExternalRp): Promise<[string, string[]]> {
  if (rp === 'go-oidc') return [await buildGoRp(), []];
  if (rp === 'authlib') return ['/usr/bin/python3', [join(HERE, 'python', 'rp.py')]];
  return ['/usr/bin/ruby', [join(HERE, 'ruby', 'rp.rb')]];
}

/**
 * Run one program. It reads the provider and client from OIDC_* variables and writes JSON lines:
 * `{"library"}` first, `{"step","ok","error"?,"claims"?}` per step, and `{"browse": url}` when the
 * user's browser must go to `url`; the driver answers that one with the URL the browser came back
 * to, on a line of the program's standard input.
 */
export async function runProgram(rp: ExternalRp, config: RpConfig, browser: Browser, timeoutMs = 60_000): Promise<RpReport> {
  const report: RpReport = { rp, library: rp, browsed: [], steps: {} };
  let child: ChildProcess;
  try {
    const [command, args] = await programCommand(rp);
    child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? tmpdir(),
        LANG: 'C.UTF-8',
        PYTHONDONTWRITEBYTECODE: '1',
        OIDC_ISSUER: config.issuer,
        OIDC_CLIENT_ID: config.clientId,
        OIDC_CLIENT_SECRET: config.clientSecret,
        OIDC_REDIRECT_URI: config.redirectUri,
        OIDC_SCOPE: config.scope,
      },
    });
  } catch (error) {
    return { ...report, error: `could not start: ${message(error)}` };
  }
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const closed = new Promise<number | null>((resolve) => {
    child.on('close', resolve);
    child.on('error', (error) => {
      report.error ??= `could not run: ${message(error)}`;
      resolve(null);
    });
  });
  child.stdin!.on('error', () => {}); // a program that ended early: its exit code and stderr say why
  const timer = setTimeout(() => {
    report.error = `no answer within ${timeoutMs} ms`;
    child.kill('SIGKILL');
  }, timeoutMs);
  try {
    for await (const line of createInterface({ input: child.stdout! })) {
      let said: { library?: string; browse?: string; step?: StepName; ok?: boolean; error?: string; claims?: Claims };
      try {
        said = JSON.parse(line);
      } catch {
        stderr += `${line}\n`;
        continue;
      }
      if (said.library) report.library = said.library;
      else if (said.step)
        report.steps[said.step] = {
          ok: said.ok === true,
          ...(said.error && { error: said.error }),
          ...(said.claims && { claims: said.claims }),
        };
      else if (said.browse) {
        report.browsed.push(said.browse);
        try {
          child.stdin!.write(`${await browser(said.browse)}\n`);
        } catch (error) {
          report.error = `browser: ${message(error)}`;
          child.kill('SIGKILL');
        }
      }
    }
  } finally {
    clearTimeout(timer);
  }
  const code = await closed;
  if (code !== 0 && !report.error) report.error = `exit code ${code}: ${stderr.trim().slice(-2000)}`;
  return report;
}

/** An error as a line: its name, its OAuth error code if any, its message, and its cause's (openid-client wraps oauth4webapi's). */
export function message(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { error?: unknown }).error ?? (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? `; cause: ${error.cause.message}` : '';
  return `${error.name}${typeof code === 'string' ? ` (${code})` : ''}: ${error.message}${cause}`;
}
