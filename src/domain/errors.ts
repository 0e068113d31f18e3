/**
 * One error class for every rule the service enforces, and the one function that
 * turns any thrown value into the SPEC error envelope
 * `{error, message, field?, value?, valid_options?, hint?, card?}`.
 * HTTP, the CLI runner and the tool server all render errors through `toEnvelope`.
 */
import { leading } from "./codepoints.ts";
import type { Card } from "./types.ts";
import { USER_ID_PATTERN, USER_ID_RULE } from "./ids.ts";

export type ErrorCode =
  | "version_conflict" | "actor_required" | "unknown_user" | "transition_illegal"
  | "unknown_enum" | "unknown_tag" | "unknown_field" | "validation_failed"
  | "target_card_missing" | "target_card_type_mismatch" | "schema_version_mismatch"
  | "not_found" | "bad_request" | "payload_too_large" | "idempotency_key_reused"
  | "user_exists" | "invalid_definitions" | "serve_only" | "unavailable" | "usage"
  | "method_not_allowed" | "forbidden" | "internal";

/** HTTP status per code (SPEC "Errors" plus DECISIONS "HTTP status for the SPEC codes"). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  version_conflict: 409, actor_required: 403, unknown_user: 422, transition_illegal: 422,
  unknown_enum: 422, unknown_tag: 422, unknown_field: 422, validation_failed: 422,
  target_card_missing: 422, target_card_type_mismatch: 422, schema_version_mismatch: 422,
  not_found: 404, bad_request: 400, payload_too_large: 413, idempotency_key_reused: 422,
  user_exists: 409, invalid_definitions: 422, serve_only: 400, unavailable: 503, usage: 400,
  method_not_allowed: 405, forbidden: 403, internal: 500,
};

/** CLI exit codes (docs/cli.md). 0 is success. */
export const EXIT_CODE: Record<ErrorCode, number> = {
  usage: 2, bad_request: 2, method_not_allowed: 2, serve_only: 2,
  not_found: 3,
  version_conflict: 4, user_exists: 4,
  unknown_user: 5, transition_illegal: 5, unknown_enum: 5, unknown_tag: 5, unknown_field: 5,
  validation_failed: 5, target_card_missing: 5, target_card_type_mismatch: 5,
  schema_version_mismatch: 5, payload_too_large: 5, idempotency_key_reused: 5,
  invalid_definitions: 5,
  actor_required: 6, forbidden: 6,
  unavailable: 7,
  internal: 1,
};

export interface ErrorEnvelope extends ErrorExtra {
  error: ErrorCode;
  message: string;
}

export interface DefinitionProblem {
  file: string;
  path: string;
  /** the line `path` starts on, for the YAML extensions file */
  line?: number;
  message: string;
  valid_options?: unknown[];
}

export interface ErrorExtra {
  field?: string;
  value?: unknown;
  valid_options?: unknown[];
  hint?: string;
  card?: Card;
  /** invalid_definitions only: every problem found */
  problems?: DefinitionProblem[];
}

const ENVELOPE_EXTRAS: ReadonlyArray<keyof ErrorExtra> = ["field", "value", "valid_options", "hint", "card", "problems"];

export class CardsError extends Error {
  override readonly name = "CardsError";
  constructor(readonly code: ErrorCode, message: string, readonly extra: ErrorExtra = {}) {
    super(message);
  }
  get status(): number { return HTTP_STATUS[this.code]; }
  toJSON(): ErrorEnvelope { return toEnvelope(this); }
}

/** True for CardsError instances, also across bundle copies (checks the name, like h3). */
export function isCardsError(e: unknown): e is CardsError {
  return e instanceof Error && e.name === "CardsError" && typeof (e as CardsError).code === "string";
}

/**
 * A failure of the machine rather than of the program, as the CardsError a caller can act
 * on: a damaged database, no file descriptors left, a full disk. Anything else is returned
 * as it is (an internal error, logged with its stack). Every surface passes what it caught
 * through this before rendering it.
 */
export function fromEnvironment(e: unknown): unknown {
  if (isCardsError(e) || !(e instanceof Error)) return e;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== "string") return e;
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return new CardsError("unavailable", `the workspace database is damaged (${e.message})`, {
      hint: "stop the processes using it and restore from a backup or dump (docs/backup.md); until then, reads of the damaged part fail",
    });
  }
  if (code === "EMFILE" || code === "ENFILE") {
    return new CardsError("unavailable", `too many open files (${code})`, {
      hint: "raise the limit (ulimit -n) or close what holds files open; the call may not have completed: re-read before retrying a write",
    });
  }
  if (code === "SQLITE_CANTOPEN" || code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_IOERR") || code === "EIO" || code === "EROFS") {
    return new CardsError("unavailable", `a workspace file could not be opened, read or written (${code}: ${e.message})`, {
      hint: "check the disk and the permissions of the workspace's .cards directory, and that this process may open more files (ulimit -n); the call may not have completed: re-read before retrying a write",
    });
  }
  if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") {
    return new CardsError("unavailable", `the disk is full (${code})`, { hint: "free disk space; the call may not have completed: re-read before retrying a write" });
  }
  return e;
}

/** An echoed value longer than this is cut in the envelope: it names the input, not repeats it. */
const ECHO_MAX_CHARS = 200;
/** A message longer than this is cut (a 120 KB argument made a 240 KB error line). */
const MESSAGE_MAX_CHARS = 2000;

/** The first `keep` characters (one fewer when that would split a surrogate pair), and the length. */
const cut = (s: string, keep: number): string => `${leading(s, keep)}… (${s.length} characters)`;

/** The envelope with a long echoed `value` (and its copies in `message`) and a long message cut. */
function shortened(env: Record<string, unknown>): Record<string, unknown> {
  const value = env.value;
  let message = env.message as string;
  if (typeof value === "string" && value.length > ECHO_MAX_CHARS) {
    const short = cut(value, ECHO_MAX_CHARS / 2);
    env.value = short;
    message = message.split(value).join(short);
  }
  if (message.length > MESSAGE_MAX_CHARS) message = cut(message, MESSAGE_MAX_CHARS / 2);
  env.message = message;
  return env;
}

/** The SPEC envelope for any thrown value. Unknown errors become a generic `internal`. */
export function toEnvelope(e: unknown): ErrorEnvelope {
  if (isCardsError(e)) {
    const env: Record<string, unknown> = { error: e.code, message: e.message };
    // fixed key order on every surface; absent extras stay absent
    for (const key of ENVELOPE_EXTRAS) if (e.extra[key] !== undefined) env[key] = e.extra[key];
    return shortened(env) as unknown as ErrorEnvelope;
  }
  return { error: "internal", message: "internal error; the server log has the details" };
}

// --- factories: a required extra cannot be forgotten ---

/** For a card id that is a short id (the 8 hex characters after card_): how to find the card (q matches it). */
export function shortIdHint(id: unknown): { hint: string } | Record<string, never> {
  if (typeof id !== "string" || !/^(card_)?[0-9a-f]{8}$/i.test(id)) return {};
  const short = id.replace(/^card_/i, "");
  return { hint: `a short id is not a card id: find the card with q (cards cards list --q ${short}; GET /cards?q=${short}; tools: search_cards {"q": "${short}"})` };
}

/** `field`: the parameter the id came from (`board_id`, `card_id`), when a caller named one. */
export const notFound = (what: string, id: string, validOptions?: readonly string[], field?: string): CardsError =>
  new CardsError("not_found", `${what} ${JSON.stringify(id)} not found`, {
    ...(field ? { field } : {}), value: id, ...(validOptions ? { valid_options: [...validOptions] } : {}),
    ...(what === "card" ? shortIdHint(id) : {}),
  });

/**
 * A stale version. An owned card's hint names the owner: a writer that lost the card to a
 * takeover must not take "retry with the current version" as leave to go on with it.
 * The write's actor is not known where the guard fails: `conflictForActor` says it after.
 */
export const versionConflict = (card: Card, message?: string, hint?: string): CardsError => {
  const e = new CardsError("version_conflict", message ?? `card ${card.id} is at version ${card.version}`, { card, hint: hint ?? conflictHint(card) });
  if (hint === undefined) ownHint.add(e);
  return e;
};

/** conflicts whose hint is versionConflict's own (not a caller's), so the actor may refine it */
const ownHint = new WeakSet<CardsError>();

/** What a writer holding a stale version should do, told from the card's owner and (when known) the writer. */
export function conflictHint(card: Card, actor?: string): string {
  if (!card.owner) {
    // a worker whose card was released under it (a forced release, a reviewer) must not go on as if it still held it
    return `re-read it and retry with version ${card.version} (the card in this error is the current one); it is unowned now: if you held it, it was released (its history says by whom), so claim it again before you go on`;
  }
  if (actor === card.owner) {
    return `it is still yours: see what changed (the card in this error is the current one; its history says who changed it; a write of yours whose answer was lost counts too), then retry with version ${card.version}`;
  }
  if (actor !== undefined) {
    return `it is owned by ${card.owner}, not you: if you held it, it was taken from you; leave it, or comment (its history shows who changed what). To change it anyway, retry with version ${card.version}`;
  }
  return `re-read the card and retry with its current version if it is still yours: it is owned by ${card.owner} now (if that is not you, another actor took it: leave it, or comment; its history shows who changed what)`;
}

/** A version conflict with its hint told for the write's actor (a write knows it; the guard deep inside did not). */
export function conflictForActor(e: unknown, actor: string): void {
  if (isCardsError(e) && ownHint.has(e) && e.extra.card) e.extra.hint = conflictHint(e.extra.card, actor);
}

export const badRequest = (message: string, extra: ErrorExtra = {}): CardsError =>
  new CardsError("bad_request", message, extra);

export const unknownEnum = (field: string, value: unknown, options: readonly string[]): CardsError =>
  new CardsError("unknown_enum", `${JSON.stringify(value)} is not an option of ${field}`, {
    field, value, valid_options: [...options],
  });

export const unknownUser = (field: string, value: unknown): CardsError =>
  new CardsError("unknown_user", `user ${JSON.stringify(value)} is not registered`, {
    field, value, hint: typeof value === "string" && !USER_ID_PATTERN.test(value)
      ? unregistrableHint(field, value)
      : "register it first: `cards users add <id> --kind agent` or POST /v1/users {id, kind} (the tool server registers no one)",
  });

/**
 * An actor may be any text (SPEC) but a user id is ASCII: "register it" cannot be done for
 * `josé`, so the hint names an ASCII id to register, with the name as its display name.
 */
export function unregistrableHint(field: string, name: string): string {
  const id = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9._@-]+/g, "-").replace(/^[^A-Za-z0-9]+|-+$/g, "").slice(0, 64) || "ID";
  return `${JSON.stringify(name)} cannot be a user id (${USER_ID_RULE}): register an ASCII id with the name as its display name (\`cards users add ${id} --kind agent --display-name ${JSON.stringify(name)}\` or POST /v1/users ${JSON.stringify({ id, kind: "agent", display_name: name })}), then ${field === "actor" ? `act as ${id}` : `name ${id} here`}`;
}
