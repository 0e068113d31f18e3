/**
 * Characters that text bound for terminals, logs and single lines may not hold. JSON
 * escapes C0 controls on output but not DEL or C1 (CSI U+009B, OSC U+009D ...), which
 * terminals act on as they do on ESC.
 */

import { CardsError } from "./errors.ts";

/** C0 controls, DEL and C1 controls. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The same, tab, line feed and carriage return aside (text of several lines). */
const CONTROL_BESIDES_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
/** What ends a line: LF, CR, NEL, and Unicode's line and paragraph separators. */
const LINE_BREAK = /[\n\r\u0085\u2028\u2029]/;

/** A character as people look it up: "U+001B". */
export const codePoint = (c: string): string => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** The first control character of `s` as "U+001B" (tab and line breaks allowed with `lines`), or undefined. */
export function controlCharIn(s: string, lines = false): string | undefined {
  const m = (lines ? CONTROL_BESIDES_LINES : CONTROL).exec(s);
  return m ? codePoint(m[0]) : undefined;
}

/** True when `s` holds a line break of any kind. */
export const hasLineBreak = (s: string): boolean => LINE_BREAK.test(s);

/**
 * `s` with control characters written as escapes, for a line a person reads (a file name
 * in a message, a log line): "\u001b" instead of the escape itself. Unicode's line and
 * paragraph separators and its bidirectional controls too, which would break the line or
 * show its text in another order.
 */
export function escapeControls(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * An actor is any string (SPEC) that can be sent and shown: no control characters, which
 * an HTTP header cannot carry and which would reach terminals raw from created_by and
 * every event's actor; and no ", ", which is how an X-Service-Actor sent twice arrives
 * (refused there), so an actor one surface takes is one every surface takes (a hook
 * calls back over HTTP as the event's actor).
 */
export function assertActorText(actor: string, field: "actor" | "assign_to" = "actor"): void {
  const { what, where } = naming(field);
  const c = controlCharIn(actor);
  if (c) {
    throw new CardsError("bad_request", `${what} holds a control character (${c})`, {
      field, hint: `name the ${field === "actor" ? "actor" : "owner"} in printable text (${where})`,
    });
  }
  if (actor.includes(", ")) {
    throw new CardsError("bad_request", `${what} ${JSON.stringify(actor)} holds ", ", which reads as more than one actor (an HTTP header sent twice arrives joined so)`, {
      field, hint: "name one actor, without \", \"",
    });
  }
}

/**
 * An actor as a caller gave it (X-Service-Actor, CARDS_ACTOR, --actor): undefined when none
 * was (absent, or empty as an unset variable or header is; an empty flag is a usage error).
 * Spaces and tabs at its ends are dropped, as HTTP drops them from a header. A blank one,
 * or one starting or ending with other whitespace (NBSP, U+3000 from an IME), is 400:
 * trimmed away, a blank one became CARDS_ACTOR or default_user without a word.
 */
export function givenActor(v: string | undefined, from: string): string | undefined {
  if (!v) return undefined;
  const a = v.replace(/^[ \t]+|[ \t]+$/g, "");
  const hint = "name the actor (--actor, CARDS_ACTOR or X-Service-Actor), or give none to act as CARDS_ACTOR or settings.default_user";
  if (a.trim() === "") {
    throw new CardsError("bad_request", `${from} ${JSON.stringify(v)} is blank${v ? ` (${[...new Set(v)].map(codePoint).join(" ")})` : ""}`, { field: "actor", hint });
  }
  const edge = /^\s|\s$/.exec(a);
  if (edge) {
    throw new CardsError("bad_request", `${from} ${JSON.stringify(v)} starts or ends with whitespace (${codePoint(edge[0])})`, {
      field: "actor", hint: `name the actor without the ${codePoint(edge[0])} at its ends`,
    });
  }
  return a;
}

/** The longest actor: what created_by, owner and every event's actor may hold (docs/limits.md). */
export const MAX_ACTOR_LENGTH = 200;

/**
 * An actor as every surface takes it: assertActorText, at most MAX_ACTOR_LENGTH
 * characters, and no space at either end (a header arrives trimmed, so " bob " could never
 * act as itself). An owner given by take-next's assign_to acts on its card as that actor:
 * the same rules.
 */
export function assertActorName(actor: string, field: "actor" | "assign_to" = "actor"): void {
  const { what, where } = naming(field);
  if (actor.length > MAX_ACTOR_LENGTH) {
    throw new CardsError("bad_request", `${what} is ${actor.length} characters; at most ${MAX_ACTOR_LENGTH}`, { field, hint: "see docs/limits.md" });
  }
  if (actor !== actor.trim()) {
    throw new CardsError("bad_request", `${what} ${JSON.stringify(actor)} starts or ends with a space`, {
      field, hint: `an actor arrives trimmed over HTTP; name it without the spaces (${where})`,
    });
  }
  assertActorText(actor, field);
}

const naming = (field: "actor" | "assign_to"): { what: string; where: string } => field === "actor"
  ? { what: "the actor", where: "--actor, CARDS_ACTOR or X-Service-Actor" }
  : { what: "assign_to", where: "assign_to, the owner who will act on the card" };

/** The entry of `among` that is `s` in Unicode's composed form (NFC), if any. */
export function sameText(among: readonly string[], s: string): string | undefined {
  const nfc = s.normalize("NFC");
  return nfc === s && among.includes(s) ? s : among.find((o) => o.normalize("NFC") === nfc);
}

/** A tag in the one form it is stored in: tag_set's spelling, else the composed one (NFC). */
export function storedTag(tag: string, tagSet: readonly string[]): string {
  return sameText(tagSet, tag) ?? tag.normalize("NFC");
}
