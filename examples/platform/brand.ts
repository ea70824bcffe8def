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

/** Nimbus's logo: served to the built-in pages as an image, and inlined in the header of the platform's own pages (html.ts). */
export const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32" aria-hidden="true">
<circle cx="16" cy="16" r="16" fill="#0069ff"/>
<path fill="#fff" d="M10 22a5 5 0 0 1-.6-9.96A7 7 0 0 1 22.8 12.2 4.9 4.9 0 0 1 22 22z"/></svg>`;

/**
 * The built-in pages dressed as the rest of Nimbus (examples/platform/html.ts): the same dark
 * header bar with the logo, the same 48rem column, cards on grey, and an error in the colours of
 * the platform's own (`.error`).
 */
const STYLESHEET = `body{max-width:none;margin:0;padding:0;background:#f5f7fa}
header.site{margin:0;padding:.75rem 1.5rem;background:#031b4e;color:#fff;font-size:1.2rem;font-weight:700;line-height:1.5}
header.site img{height:1.75rem;width:1.75rem}
main{max-width:48rem;margin:2rem auto;padding:0 1rem}h1{font-size:1.5rem}
.box{background:#fff;border-color:#d0d7de}button{padding:.4rem 1rem}
@media (max-width:40rem){header.site{padding:.6rem 1rem}main{margin:1.25rem auto}}
`;

/** The logo as a 32 px PNG, for `/favicon.ico` (browsers read a PNG there). */
const FAVICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAADRElEQVR4nLyXS2yMURTHf3emrUYUjdaziUcUQWw8GsGCeEYsLEhIECJaoTaeQcQjhFiJ0HrEQtgQKTbEYyPi0RUSgpBYkLTValrS6PRx/e9Mm47p1/mmzTf9JXd6vvPd3nO+e88999wMUqXUDqCVZZLWYJmGIU9ynmSrv7XRZvhAO7ekechl05LKsMa3x3abq9+DaiVqg0gFS4NGviLpFGWmnj45sMZm6ft2SjqslkvfqJczJ6jjArdNhJQdKLWDaaFCbxcRBJZ7ZLKR86bR34HtdrJ+76lNJkgsHxUfqxUbH3t2YJvNI8QLaQtJD5/JYL5m4menIhRnPFNP99No3DEpurTOVgcZdLmyW8bn+o0Q1pxtKII546BgKGSG4UcDfKqGsmfwp9lnAMO8qC04HXt0lNp8efZVTznJ/nf2WLi5GQqHe7+vb4Jdt+BGJX40KiYKKTc1sSVo0VbxMT5jDDze1bNxR+5AuL4J1s3Cj8Fqx51gtB5DNCU1krJ66h3SPH06ChPzSYnmVhh9AH41Je9GGyNChFmYzLhj/ezUjTsGKLKKF/h3c7YztBbLvdJRtgbZvRhWToei8fSavUsgX4n77lt49qWHTrJtlHheSSyK17u1rNzfu69OxtnHsL+C6KmVwGsXhCMTtcXzgzPucLNR4r0kIz0dWDuTwDm2CrLCeDrQjVFDCBwXD15b2DlQlahst6QFF1sJVHk68PY7gRNRbqj8hocDljeJ2ivPCZyLOicibQlK2Q4pBzxM7FyhvfvgPYHxVBXAnjseLyx3Y6k4jM4yZaY4XPrdtySWBccOU/LOple06Gu/6tS//hrOPPKIK0tEpVpOLAeW2HLNRDH9ieWSTsOS2DYMcVSKv/QXMVtHYqYdF43bCZfoLwznXC3Q5YAjM+rRO9LPK7I51uVLPFttgYq0l9IWkB6+qAaYq8q4tlPxfyq+ar7L+EpcyRQ0Nnp1WxFvvLsDjjLzTtoJkl4QHE+01aco1rpVBp6HERdMHSNYII+3yvNq+opVqWfZprGWRcf0wP9yusXmKEUdkrSD3l1Oy1X1neSa+Z2sq78DnbjreYSlmrO1MjAVOq7nJjpGbccauwR+W4H2INXr+T8AAAD//wFcc/4AAAAGSURBVAMAy8Hdd320odMAAAAASUVORK5CYII=',
  'base64',
);

/** `GET /brand/nimbus-logo.svg`, `GET /brand/oauth-pages.css` and `GET /favicon.ico`. */
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
  router.get('/favicon.ico', (_req, res) => {
    res.set({ 'content-type': 'image/png', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }).send(FAVICON);
  });
  return router;
}
