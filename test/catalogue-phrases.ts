/**
 * The phrases of a catalogue (src/ui/messages/), to prove a page in another language shows none of
 * the English ones: shared by test/core/messages.test.ts, the adapters' suite and the browser tests.
 */
import type { Messages } from '../src/ui/messages/index.js';

/** Every string of a catalogue. */
export const values = (m: Messages): string[] => [
  ...Object.values(m).filter((v): v is string => typeof v === 'string'),
  ...Object.values(m.scopes),
  ...Object.values(m.errors),
];

/** The words of a catalogue string outside its placeholders, long enough to be a phrase of the language. */
export const phrases = (text: string): string[] =>
  text
    .split(/\{\w+\}/)
    .map((s) => s.trim())
    .filter((s) => /[A-Za-z]{3}/.test(s));

/**
 * Whether `text` shows `phrase` as whole words: a French word may begin as an English one does
 * ("Connecté·e", "Continuer"), which is no English left on a page.
 */
export const showsPhrase = (text: string, phrase: string): boolean =>
  new RegExp(`(?<![\\p{L}\\p{N}])${phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'u').test(text);
