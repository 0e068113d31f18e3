/**
 * Untrusted JSON (request bodies, --data and JSON flags, tool-server messages) is parsed
 * here, with a nesting bound: nothing the API takes nests deeper than a few levels
 * (filters stop at 16), while a 100 KB body of brackets would otherwise overflow the
 * stack of every recursive walk after the parse.
 */
import { CardsError, type ErrorExtra } from "./errors.ts";

export const MAX_JSON_DEPTH = 64;

/** True when `value` has objects or arrays nested more than `max` deep (walked without recursion). */
export function exceedsJsonDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== "object") return false;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop() as object;
    const d = depths.pop()!;
    if (d > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (let i = 0; i < children.length; i++) {
      const c: unknown = children[i];
      if (c !== null && typeof c === "object") {
        stack.push(c);
        depths.push(d + 1);
      }
    }
  }
  return false;
}

/**
 * JSON.parse for untrusted text: 400 `bad_request` when it is not JSON or nests too deep.
 * `what` names it in the message ("request body", "--data"); `extra` goes into the error.
 */
export function parseUntrustedJson(text: string, what: string, extra: ErrorExtra = {}): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep(what, extra);
    throw new CardsError("bad_request", `${what} is not valid JSON: ${(e as Error).message}`, extra);
  }
  if (exceedsJsonDepth(value)) throw tooDeep(what, extra);
  const at = parsedLoneSurrogate(text, value);
  if (at !== undefined) throw loneSurrogate(what, at, extra);
  return value;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * findLoneSurrogate for `value` parsed from `text`, walking it only when the text could
 * have made one: a \uD800-\uDFFF escape (text decoded from UTF-8 holds none raw).
 */
export function parsedLoneSurrogate(text: string, value: unknown): string | undefined {
  return SURROGATE_ESCAPE.test(text) || !text.isWellFormed() ? findLoneSurrogate(value) : undefined;
}

/**
 * Where the first string (an object key or a value) holding an unpaired UTF-16 surrogate
 * is: a JSON path like `fields.notes[2]` ("" for the value itself), or undefined. Such a
 * string is no text: SQLite stores U+FFFD in its place while the event log keeps the
 * escape, and strict JSON readers (jq, Python) refuse every read that echoes it.
 */
export function findLoneSurrogate(value: unknown): string | undefined {
  return findInValue(value, (v) => (typeof v === "string" && !v.isWellFormed() ? "unpaired surrogate" : undefined))?.at;
}

/**
 * The first key or leaf of `value` (depth first, in order) that `test` finds a problem
 * with, and its JSON path ("" for the value itself). Walked without recursion.
 */
export function findInValue(value: unknown, test: (v: unknown, isKey: boolean) => string | undefined): { at: string; problem: string } | undefined {
  const stack: Array<[unknown, string]> = [[value, ""]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== "object") {
      const problem = test(v, false);
      if (problem) return { at: path, problem };
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
      continue;
    }
    for (const [k, child] of Object.entries(v)) {
      const at = path ? `${path}.${k}` : k;
      const problem = test(k, true);
      if (problem) return { at, problem };
      stack.push([child, at]);
    }
  }
  return undefined;
}

/** 400 bad_request for a string with an unpaired surrogate at `at` (findLoneSurrogate). */
export function loneSurrogate(what: string, at: string, extra: ErrorExtra = {}): CardsError {
  return new CardsError("bad_request", `${what} has an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair)${at ? ` at ${at}` : ""}`, {
    ...extra, ...(at ? { field: at } : {}),
    hint: "send the character itself in UTF-8, or both halves of its surrogate pair (\\ud83d\\ude80 for U+1F680)",
  });
}

function tooDeep(what: string, extra: ErrorExtra): CardsError {
  return new CardsError("bad_request", `${what} nests deeper than ${MAX_JSON_DEPTH} levels`, { ...extra, hint: "no request shape nests that deep; see docs/limits.md" });
}

/**
 * `value` as JSON with every object's keys in sorted order: two bodies that are equal as
 * JSON (whitespace, key order) give the same text. Idempotency compares requests by it.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const o = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o).sort()) if (o[k] !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(o[k])}`);
  return `{${parts.join(",")}}`;
}
