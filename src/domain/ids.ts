/**
 * Identifiers: card ids `card_<16 hex>`, short ids (first 8 hex), comment and entry ids,
 * and event ids (zero-padded decimal, so they sort the same as strings and as numbers).
 * Randomness comes from WebCrypto, available on every runtime.
 */
export const EVENT_ID_WIDTH = 12;

const HEX = "0123456789abcdef";

function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let s = "";
  for (let i = 0; i < b.length; i++) s += HEX[b[i]! >> 4]! + HEX[b[i]! & 15]!;
  return s;
}

export const newCardId = (): string => `card_${randomHex(8)}`;
export const newCommentId = (): string => `cmt_${randomHex(8)}`;
export const newEntryId = (): string => `ent_${randomHex(8)}`;

export const CARD_ID_RE = /^card_[0-9a-f]{16}$/;

/** `card_0123abcd…` -> `0123abcd` */
export const shortId = (cardId: string): string => cardId.slice(5, 13);

export const formatEventId = (seq: number): string => String(seq).padStart(EVENT_ID_WIDTH, "0");

/** Parses an event id (or `since` value); null when it is not a non-negative integer. */
export function parseEventId(s: string): number | null {
  if (!/^\d{1,15}$/.test(s)) return null;
  return Number(s);
}

/** What a field key (and a `fields.<id>` path) may look like: letters, digits, `_` and `-`. */
export const FIELD_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Definition ids name files, routes and tools (`update_<card type id>`): with a harness prefix such as mcp__cards__, tool names stay within the 64 characters common harnesses allow. */
export const MAX_ID_LENGTH = 40;

/** The token that names the calling actor wherever a user is named (filters, owner, assign_to). */
export const ME = "me";

/** What a user id may look like, wherever users are registered (POST /users, workspace.json). */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const USER_ID_RULE = 'user ids are 1-64 ASCII letters, digits, ".", "_", "@" or "-", starting with a letter or digit';
