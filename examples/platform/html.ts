/**
 * The platform's HTML: `html` escapes every interpolated value with authgate's `escapeHtml`
 * unless the value is itself `html`, and `sendPage` wraps a page in the layout and sends it with
 * authgate's `PAGE_HEADERS` (X-Frame-Options DENY, CSP `frame-ancestors 'none'` and no script,
 * no-store, no referrer), so no page of the platform can be framed (clickjacking).
 */
import type { Response } from 'express';
import { PAGE_HEADERS, escapeHtml, type Account } from '../../src/index.js';
import { LOGO } from './brand.js';

export class Html {
  constructor(readonly value: string) {}
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + render(values[i - 1]) + s));
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return value == null || value === false ? '' : escapeHtml(String(value));
}

/** A date as users read it, in UTC so every reader sees the same. */
export const formatDate = (ms: number) =>
  `${new Date(ms).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })} UTC`;

/**
 * What `read` and `read write` mean, in the words the consent page uses too
 * (docs/reference.md#scope).
 */
export const scopeWords = (scope: string[]) =>
  scope.includes('write') ? 'Read and write: see, create, change and delete resources' : 'Read-only: see the account and its resources';

/** A hidden field carrying the session's CSRF token; every POST form of the platform has one. */
export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;

/**
 * The step before an action that cannot be undone: a page that names the thing and says what will
 * happen, a Confirm button (the same form again, CSRF-protected, with `confirm=yes`) and Cancel.
 * The lists' buttons post without `confirm`, so one click never acts; no script needed.
 */
export function confirmBox(
  csrf: string,
  step: { action: string; fields?: Record<string, string>; question: Html; confirm: string; cancel: string },
): Html {
  return html`<div class="box" id="confirm"><p>${step.question}</p>
<form method="post" action="${step.action}">${csrfField(csrf)}${Object.entries(step.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<input type="hidden" name="confirm" value="yes">
<p class="actions"><button class="danger">${step.confirm}</button> <a class="cancel" href="${step.cancel}">Cancel</a></p></form></div>`;
}

export interface PageContext {
  title: string;
  /**
   * A page of the sign-in and authorization flow (the sign-in page): the header shows the logo
   * and no navigation, as authgate's built-in consent and device pages do, so the steps of one
   * flow look alike.
   */
  flow?: boolean;
  /** The page's language (`<html lang>`); default English. */
  lang?: string;
  /** The signed-in user, for the header. */
  user?: Account | undefined;
  /** The session's CSRF token, for the header's sign-out form. */
  csrf?: string | undefined;
  /** A one-time message shown above the page. */
  flash?: string | undefined;
}

export function sendPage(res: Response, page: PageContext, body: Html, status = 200): void {
  const nav = page.flow
    ? ''
    : page.user
      ? html`<a href="/account/applications">Authorized applications</a><a href="/account/tokens">API tokens</a><a href="/developer">Developer</a>
<form method="post" action="/logout">${csrfField(page.csrf ?? '')}<span class="who">${page.user.name}</span><button class="link">Sign out</button></form>`
      : html`<a href="/login">Sign in</a>`;
  res
    .status(status)
    .set(PAGE_HEADERS)
    .send(
      render(html`<!doctype html>
<html lang="${page.lang ?? 'en'}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${page.title} · Nimbus</title><style>${new Html(STYLE)}</style></head>
<body><header><a class="brand" href="/">${new Html(LOGO)}<span>Nimbus</span></a>${nav ? html`<nav>${nav}</nav>` : ''}</header>
<main>${page.flash ? html`<p class="flash">${page.flash}</p>` : ''}<h1>${page.title}</h1>${body}</main></body></html>`),
    );
}

const STYLE = `
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1f24;background:#f5f7fa}
header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.25rem 1.25rem;padding:.75rem 1.5rem;background:#031b4e;color:#fff}
header a{color:#fff;text-decoration:none}.brand{display:inline-flex;align-items:center;gap:.5rem;font-weight:700;font-size:1.2rem}.brand svg{height:1.75rem;width:1.75rem}
nav{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1.25rem}nav form{display:inline-flex;align-items:center;white-space:nowrap}.who{opacity:.8;margin-right:.5rem}
main{max-width:48rem;margin:2rem auto;padding:0 1rem}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
.box{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}.box h2{margin:0 0 .5rem}.box>:first-child,.box>form>:first-child{margin-top:0}.box p:last-child{margin-bottom:0}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #d0d7de;border-radius:8px}
th,td{text-align:left;padding:.6rem .75rem;border-bottom:1px solid #eaeef2;vertical-align:top}tr:last-child td{border-bottom:none}th{font-size:.85rem;color:#57606a}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}input[type=text],input[type=email],input[type=password],input[type=url]{font:inherit;width:100%;box-sizing:border-box;padding:.45rem .6rem;border:1px solid #d0d7de;border-radius:6px}
select{font:inherit;max-width:100%}
button{font:inherit;padding:.4rem 1rem;border-radius:6px;border:1px solid #0069ff;background:#0069ff;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0069ff}button.danger{background:#fff;color:#cf222e;border-color:#cf222e}
button.link{background:none;border:none;color:#fff;padding:0;text-decoration:underline}a.cancel{margin-left:1rem}
td form{display:inline-block;margin:0 .25rem .25rem 0}.actions{margin-top:1rem}
code{background:#eef1f4;padding:.05rem .3rem;border-radius:4px;overflow-wrap:anywhere}
table.apps{table-layout:fixed}table.apps th:first-child{width:28%}table.apps th:last-child{width:10rem}
main a{color:#0069ff}
code.id{font-size:.85em;overflow-wrap:anywhere;word-break:break-all;-webkit-box-decoration-break:clone;box-decoration-break:clone}
dl.ids{margin:0}dl.ids dt{font-size:.8rem;font-weight:600;color:#57606a}dl.ids dd{margin:0 0 .5rem}dl.ids dd:last-child{margin-bottom:0}
.secret{display:block;margin:.25rem 0 0;font-family:ui-monospace,monospace;background:#fff8c5;border:1px solid #d4a72c;padding:.5rem;border-radius:6px;word-break:break-all}
.flash{background:#dafbe1;border:1px solid #4ac26b;padding:.5rem .75rem;border-radius:6px}
.error{background:#ffebe9;border:1px solid #ff8182;padding:.5rem .75rem;border-radius:6px}
.muted{color:#57606a;font-size:.9rem}
@media (max-width:40rem){header{padding:.6rem 1rem}main{margin:1.25rem auto}
table,tbody,tr,td{display:block}tr:first-child:has(th){display:none}tr{border-bottom:1px solid #d0d7de}tr:last-child{border-bottom:none}td{border-bottom:none;padding:.4rem .75rem}
td[data-label]::before{content:attr(data-label);display:block;font-size:.8rem;font-weight:600;color:#57606a}}`;
