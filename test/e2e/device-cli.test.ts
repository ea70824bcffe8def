/**
 * The README's terminal sign-in, as a user does it: `npm run example:cli` (examples/cli/device-login.ts,
 * openid-client's RFC 8628 device flow) runs as its own process against the demo, prints a URL
 * and a code; the user opens the URL in Chromium, signs in to Nimbus, finds the code filled in,
 * connects; the CLI, polling meanwhile, gets its tokens and calls the API. Then the same with
 * Deny, and the CLI says so.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ADA, browserAvailable, E2E_TIMEOUT, navigate, shot, signIn, useBrowserDemo } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI as `npm run example:cli -- <client id>` runs it, and what it printed so far. */
function runCli(platformUrl: string, clientId: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', 'examples/cli/device-login.ts', clientId], {
    cwd: ROOT,
    env: { ...process.env, NIMBUS_URL: platformUrl, NODE_OPTIONS: '' },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const printed = async (pattern: RegExp, timeoutMs = 60_000) => {
    const started = Date.now();
    while (!pattern.test(output)) {
      if (Date.now() - started > timeoutMs) throw new Error(`the CLI did not print ${pattern}; it printed:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return pattern.exec(output)!;
  };
  return { child, exited, printed, output: () => output };
}

describe.skipIf(!browserAvailable)('npm run example:cli: a terminal signed in with the device grant', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();
  const running: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of running.splice(0)) child.kill();
  });

  it('the CLI prints a URL and a code; the user signs in, connects; the CLI gets tokens and GET /v2/account answers 200', async () => {
    const cli = runCli(h.platformUrl, h.demo.cli.clientId);
    running.push(cli.child);
    const [, complete] = await cli.printed(/\(or open (\S+)\)/);
    const [, code] = await cli.printed(/enter the code\s+([B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4})/);
    expect(complete).toContain(`user_code=${code}`);

    const page = await h.newPage();
    await page.goto(complete!);
    await signIn(page, ADA); // nobody was signed in: the host's sign-in page, then back
    expect(await page.inputValue('#user_code')).toBe(code);
    await shot(page, 'device-cli-01-code');
    await navigate(page, page.locator('form button[type=submit]').first());
    expect(await page.textContent('body')).toContain(code!);
    await shot(page, 'device-cli-02-confirm');
    await navigate(page, page.locator('button[value=approve]'));
    await shot(page, 'device-cli-03-connected');

    const [, status] = await cli.printed(/GET \/v2\/account answered (\d+)/);
    expect(status).toBe('200');
    expect(cli.output()).toContain(ADA.email);
    expect(await cli.exited).toBe(0);
  });

  it('Deny on the confirmation: the CLI says access_denied and gets nothing', async () => {
    const cli = runCli(h.platformUrl, h.demo.cli.clientId);
    running.push(cli.child);
    const [, complete] = await cli.printed(/\(or open (\S+)\)/);
    const page = await h.newPage();
    await page.goto(complete!);
    await signIn(page, ADA);
    await navigate(page, page.locator('form button[type=submit]').first());
    await navigate(page, page.locator('button[value=deny]'));
    await cli.printed(/Not signed in: access_denied/);
    expect(cli.output()).not.toContain('GET /v2/account answered');
  });
});
