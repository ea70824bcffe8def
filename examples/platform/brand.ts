/**
 * Nimbus's brand on authgate's built-in consent and error pages (docs/reference.md#branding-and-languages):
 * the name, the accent colour of Nimbus's buttons, a logo and a stylesheet the platform serves
 * itself (paths of its own origin, so the pages' CSP allows exactly `'self'` for them), French
 * besides English by the browser's Accept-Language, and "You can revoke this access" linking to
 * the authorized-applications page.
 */
import express, { type Router } from 'express';
import type { PagesOptions } from '../../src/index.js';

export const NIMBUS_PAGES: PagesOptions = {
  brand: {
    name: 'Nimbus',
    logoUrl: '/brand/nimbus-logo.svg',
    accentColor: '#0069ff',
    stylesheetUrl: '/brand/oauth-pages.css',
  },
  messages: { fr: {} },
  authorizedAppsUrl: '/account/applications',
};

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32">
<circle cx="16" cy="16" r="16" fill="#0069ff"/>
<path fill="#fff" d="M10 22a5 5 0 0 1-.6-9.96A7 7 0 0 1 22.8 12.2 4.9 4.9 0 0 1 22 22z"/></svg>`;

/** The built-in pages dressed as the rest of Nimbus (examples/platform/html.ts): the dark header bar, cards on grey. */
const STYLESHEET = `body{max-width:none;margin:0;padding:0;background:#f5f7fa}
header.site{margin:0;padding:.75rem 1.5rem;background:#031b4e;color:#fff;font-size:1.2rem;font-weight:700}
header.site img{height:1.75rem}
main{max-width:40rem;margin:2rem auto;padding:0 1rem}h1{font-size:1.5rem}
.box{background:#fff;border-color:#d0d7de}button{padding:.45rem 1.1rem}
`;

/** `GET /brand/nimbus-logo.svg` and `GET /brand/oauth-pages.css`. */
export function brandRoutes(): Router {
  const router = express.Router();
  router.get('/brand/nimbus-logo.svg', (_req, res) => {
    res.set({ 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }).send(LOGO);
  });
  router.get('/brand/oauth-pages.css', (_req, res) => {
    res
      .set({ 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' })
      .send(STYLESHEET);
  });
  return router;
}
