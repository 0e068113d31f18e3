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
  return value;
}

function tooDeep(what: string, extra: ErrorExtra): CardsError {
  return new CardsError("bad_request", `${what} nests deeper than ${MAX_JSON_DEPTH} levels`, { ...extra, hint: "no request shape nests that deep; see docs/limits.md" });
}
