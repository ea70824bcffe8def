import { en, type MessageKey, type Messages } from './en.js';
import { fr } from './fr.js';

export { en, fr };
export type { MessageKey, Messages, MessagesInput } from './en.js';

/**
 * The catalogues authgate ships, by language tag (lower case): English, the default and the
 * reference, and French. A language is offered on the pages only when the host names it in
 * `pages.messages` (`{ fr: {} }` for the shipped French as it is); English always is.
 * @group Pages
 */
export const SHIPPED_MESSAGES: Readonly<Record<string, Messages>> = Object.freeze({ en, fr });

/** The keys of the plain strings, in the English catalogue's order. */
export const MESSAGE_KEYS: readonly MessageKey[] = Object.keys(en).filter((k): k is MessageKey => k !== 'scopes' && k !== 'errors');

/** The `{placeholders}` of a template, sorted. */
export function placeholders(template: string): string[] {
  return [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
}
