/**
 * The Express the suite runs on is the one its project means: Express 5 in the main project,
 * Express 4 in the `express4` one (vitest.config.ts resolves `express` to the devDependency
 * `express4` there). Without this, an alias that stopped applying would leave the Express 4 run
 * silently testing Express 5 again.
 */
import express from 'express';
import { describe, expect, it } from 'vitest';
import { EXPRESS_MAJOR } from './targets/select.js';

describe('the Express under test', () => {
  it(`is Express ${EXPRESS_MAJOR}`, () => {
    // Express 5 dropped the `express.query` middleware that Express 4 exports.
    const major = typeof (express as unknown as { query?: unknown }).query === 'function' ? 4 : 5;
    expect(major).toBe(EXPRESS_MAJOR);
  });
});
