import { wholeNumber } from '../readers.js';
import type { GROUPS } from './groups.js';

/**
 * One setting, defined once: how its text is read, what is accepted (in the words of the error an
 * operator sees), its default, where it goes, and how docs/configuration.md and `--help` say it.
 */
export interface Setting<T = unknown> {
  /** The text to a value; undefined (or a throw, whose message is the reason) when not accepted. */
  read: (value: string) => T | undefined;
  /** Completes "it must be …". */
  accepts: string;
  /** As an operator would write it, read by `read` like any value; absent: the setting is absent. */
  default?: string;
  /** The default in words, for the docs, where it is more than a value (or is computed). */
  defaultText?: string;
  /** Said after the default in the docs: `0` (off). */
  defaultMeans?: string;
  /** The RelayConfig field it fills; absent: loadConfig places it itself. */
  field?: string;
  /** The RelayOptions field of the same name and meaning takes the value as it is. */
  option?: true;
  /** Never echoed back, in errors or anywhere else. */
  secret?: boolean;
  /** Older names still read, when the setting itself is not set. */
  aliases?: readonly string[];
  group: keyof typeof GROUPS;
  /** What it does: the docs' table cell (Markdown, one line). */
  docs: string;
  /** What it does in a few words: `rewardbus-relay --help`. */
  help: string;
}

/** A whole number's reader and what it accepts, `what` saying its unit. */
export const count = (what: string, min = 0) => ({ read: wholeNumber(min), accepts: `a whole number${min ? ` from ${min}` : ''} (${what})` });
/** What a secret must be, before how several are listed to rotate it. */
export const secretsToRotate = 'at least 32 characters without spaces';
