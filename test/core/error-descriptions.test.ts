/**
 * Every `error_description` is ASCII (docs/reference.md#conventions), in the character set RFC 6749
 * §5.2 allows (%x20-21 / %x23-5B / %x5D-7E: printable ASCII without `"` and `\`), as RFC 7591
 * §3.2.2 asks of registration errors too. Two proofs: a scan of the sources for every description
 * written in them, and the error builders themselves, which make whatever they are given fit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { asciiDescription, OAuthError } from '../../src/errors.js';
import { errorPage } from '../../src/failure.js';
import { json, setup } from '../helpers.js';

const RFC6749_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;
const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The argument that is a description, by the name of the function called: `new OAuthError(code,
 * description)`, `fieldRefused(field, description)`, `errorPage(code, description)`,
 * `new AuthorizeError(code, description, callback)`, the authorization request's
 * `problem(parameter, message)`, the bearer
 * `challenge(ctx, status, code, description)`, registration's `bad(code, description)` and the
 * adapters' body errors.
 */
const DESCRIPTION_ARGUMENT: Record<string, number> = {
  OAuthError: 1,
  fieldRefused: 1,
  errorPage: 1,
  AuthorizeError: 1,
  problem: 1,
  challenge: 3,
  bad: 1,
  BodyError: 1,
  sendBodyError: 2,
};
/** Functions whose returned strings become descriptions ("The callback URL <problem>."). */
const PROBLEM_FUNCTIONS = new Set(['redirectUriProblem', 'notAscii']);

/** The literal text pieces of a description expression; `${...}` parts are checked where they come from. */
function literalPieces(node: ts.Expression, constants: Map<string, ts.Expression>, out: string[]): void {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push(node.text);
  else if (ts.isTemplateExpression(node)) {
    out.push(node.head.text);
    for (const span of node.templateSpans) {
      literalPieces(span.expression, constants, out);
      out.push(span.literal.text);
    }
  } else if (ts.isConditionalExpression(node)) {
    literalPieces(node.whenTrue, constants, out);
    literalPieces(node.whenFalse, constants, out);
  } else if (ts.isParenthesizedExpression(node)) literalPieces(node.expression, constants, out);
  else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    literalPieces(node.left, constants, out);
    literalPieces(node.right, constants, out);
  } else if (ts.isIdentifier(node) && constants.has(node.text)) literalPieces(constants.get(node.text)!, constants, out);
}

/** Every description written in a source file, with where it is. */
function descriptionsIn(file: string): { where: string; text: string }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const constants = new Map<string, ts.Expression>();
  const found: { where: string; text: string }[] = [];
  const add = (node: ts.Node, expression: ts.Expression | undefined) => {
    if (!expression) return;
    const pieces: string[] = [];
    literalPieces(expression, constants, pieces);
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    for (const text of pieces) found.push({ where: `${file.slice(ROOT.length + 1)}:${line}`, text });
  };
  const collectConstants = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) constants.set(node.name.text, node.initializer);
    ts.forEachChild(node, collectConstants);
  };
  collectConstants(source);
  let inProblemFunction = 0;
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
      const index = DESCRIPTION_ARGUMENT[name];
      if (index !== undefined) add(node, node.arguments?.[index]);
    }
    if (
      ts.isPropertyAssignment(node) &&
      (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
      node.name.text === 'error_description'
    ) {
      add(node, node.initializer);
    }
    const problem = ts.isFunctionDeclaration(node) && node.name !== undefined && PROBLEM_FUNCTIONS.has(node.name.text);
    if (problem) inProblemFunction++;
    if (inProblemFunction > 0 && ts.isReturnStatement(node) && node.expression) add(node, node.expression);
    ts.forEachChild(node, visit);
    if (problem) inProblemFunction--;
  };
  visit(source);
  return found;
}

describe('every error_description written in the sources is in the RFC 6749 §5.2 character set', () => {
  const files = [...sources('src'), ...sources('adapters')];
  const all = files.flatMap(descriptionsIn);

  it('the scan finds the descriptions (so that it proves something)', () => {
    expect(all.length).toBeGreaterThan(80);
    const texts = all.map((d) => d.text);
    for (const known of [
      'Client authentication failed.',
      'The user denied the authorization request.',
      'must use https (http only for localhost, 127.0.0.1 or [::1])',
      'The request body is larger than ',
    ]) {
      expect(texts).toContain(known);
    }
  });

  it('none holds a character outside %x20-21 / %x23-5B / %x5D-7E', () => {
    expect(all.filter((d) => !RFC6749_DESCRIPTION.test(d.text))).toEqual([]);
  });

  it("no string in the sources is non-ASCII, but for the pages' catalogues (src/ui/messages/: UTF-8 HTML, never a description)", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (
          (ts.isStringLiteral(node) ||
            ts.isNoSubstitutionTemplateLiteral(node) ||
            ts.isTemplateHead(node) ||
            ts.isTemplateMiddle(node) ||
            ts.isTemplateTail(node)) &&
          /[^\x00-\x7f]/.test(node.text)
        ) {
          const catalogue = file.slice(ROOT.length + 1).startsWith(join('src', 'ui', 'messages'));
          if (!catalogue) offenders.push(`${file.slice(ROOT.length + 1)}: ${node.text}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offenders).toEqual([]);
  });
});

describe('the error builders make any description fit', () => {
  const NASTY = 'Refusé: "quoted" \\ back\tslash\n§3.1.2 ✓ \ud800';

  it('asciiDescription keeps a fitting text as it is and makes any other fit', () => {
    expect(asciiDescription("The parameter 'x' is malformed.")).toBe("The parameter 'x' is malformed.");
    expect(asciiDescription(NASTY)).toMatch(RFC6749_DESCRIPTION);
    expect(asciiDescription('a "b" c\\d')).toBe("a 'b' c/d");
  });

  it('OAuthError and errorPage', () => {
    expect(new OAuthError('invalid_request', NASTY).description).toMatch(RFC6749_DESCRIPTION);
    const page = errorPage('invalid_request', NASTY);
    expect(page.type === 'error' && page.description).toMatch(RFC6749_DESCRIPTION);
  });

  it('many error paths through the core: every description fits', async () => {
    const t = await setup({ allowDynamicRegistration: true });
    const seen: string[] = [];
    const record = (response: { headers: Record<string, string>; body: string }) => {
      const body = JSON.parse(response.body || '{}') as { error_description?: string };
      if (body.error_description !== undefined) seen.push(body.error_description);
      const challenge = /error_description="([^"]*)"/.exec(response.headers['www-authenticate'] ?? '');
      if (challenge) seen.push(challenge[1]!);
    };
    const token = (form: Record<string, string> | string, headers: Record<string, string> = {}) =>
      t.server.token(t.post('/v1/oauth/token', form, headers));
    const code = await t.getCode();
    for (const response of [
      await token({}),
      await token({ grant_type: 'password' }),
      await token('grant_type=a&grant_type=b'),
      await token({ grant_type: 'authorization_code', code, client_id: t.client.clientId, client_secret: 'wrong' }),
      await token({
        grant_type: 'authorization_code',
        code: 'x',
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
        redirect_uri: 'https://client.example/cb',
      }),
      await token({ grant_type: 'refresh_token', refresh_token: 'x', scope: 'read ü' }),
      await token({ grant_type: 'refresh_token' }, { authorization: 'Basic !!!' }),
      await token({ grant_type: 'refresh_token' }, { authorization: 'Digest realm="ü"' }),
      await token({ grant_type: 'refresh_token' }, { authorization: 'Basic a, Basic b' }),
      await token({ grant_type: 'refresh_token' }, { 'content-type': 'text/plain' }),
      await token(`${'x'.repeat(5000)}=1&${encodeURIComponent('ü"')}=2&grant_type=${'g'.repeat(200)}`),
      await t.server.token({ method: 'GET', url: '/v1/oauth/token', headers: {} }),
      await t.server.revoke(t.post('/v1/oauth/revoke', {})),
      await t.server.revoke(t.post('/v1/oauth/revoke', { token: 'x', client_id: t.client.clientId, client_secret: 'ü' })),
      await t.server.introspect(t.post('/v1/oauth/introspect', { token: 'x' })),
      await t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://例え.example/cb'] }),
      }),
      await t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://a.example/cb?code=1'] }),
      }),
      await t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://a.example/cb#x'] }),
      }),
      await t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: '{',
      }),
      await t.server.registerDynamic({ method: 'GET', url: '/v1/oauth/register', headers: {} }),
    ])
      record(response);
    for (const headers of [
      {},
      { authorization: 'Bearer ü' },
      { authorization: 'Bearer a b' },
      { authorization: 'Bearer x, Bearer y' },
      { authorization: 'Bearer abc' },
    ]) {
      const result = await t.server.authenticate({ method: 'GET', url: '/v2/account', headers });
      if (!result.ok) record(result.response as { headers: Record<string, string>; body: string });
    }
    const requests: Record<string, string>[] = [
      { response_type: 'bogus' },
      { prompt: 'bogus' },
      { prompt: 'none login' },
      { max_auth_age: '-1' },
      { i: 'ü' },
      { state: 'a\u0001' },
      { code_challenge: 'x', code_challenge_method: 'S256' },
      { code_challenge: 'ü'.repeat(50), code_challenge_method: 'plain' },
      { prompt: 'none' },
      { prompt: 'x'.repeat(300) },
    ];
    for (const params of requests) {
      const decision = await t.server.authorize(t.get(t.authorizeUrl(params)));
      if (decision.type === 'redirect') {
        const url = new URL(decision.location);
        const description = url.searchParams.get('error_description') ?? new URLSearchParams(url.hash.slice(1)).get('error_description');
        if (description !== null) seen.push(description);
      } else if (decision.type === 'error') seen.push(decision.description);
    }
    for (const url of [
      '/v1/oauth/authorize',
      `/v1/oauth/authorize?client_id=ü`,
      `/v1/oauth/authorize?client_id=${t.client.clientId}&redirect_uri=https://x.example/ü`,
      t.authorizeUrl({ scope: 'ü' }),
    ]) {
      const decision = await t.server.authorize(t.get(url));
      if (decision.type === 'error') seen.push(decision.description);
    }
    for (const step of [t.server.resume('ü', t.get('/')), t.server.approve('x', t.get('/')), t.server.deny('', t.get('/'))]) {
      const decision = await step;
      if (decision.type === 'error') seen.push(decision.description);
    }
    expect(seen.length).toBeGreaterThan(35);
    expect(seen.filter((d) => !RFC6749_DESCRIPTION.test(d))).toEqual([]);
    // The JSON answers above are JSON: a body that is not would have thrown in `record`.
    expect(json(await token({}))).toHaveProperty('error', 'invalid_request');
  });
});
