/**
 * Messages in the corner: errors show the envelope's message, valid options and hint (and
 * stay until dismissed); a version conflict says who changed the card meanwhile instead.
 */
import { ApiError } from "./api.ts";
import { conflictMessage, CONFLICT_TEXT } from "./conflict.ts";
import { h, $ } from "./dom.ts";
import { columnName } from "./state.ts";
import type { ErrorBody } from "./types.ts";

/**
 * How long a note ("Saved", also said by the status region) stays; it waits while the focus
 * is in it. Not while hovered: a note that appears under a resting pointer would stay over
 * the button it covers (Save, at the panel's foot).
 */
const INFO_MS = 4000;
/** Errors stay until dismissed (×), so there is time to read their options; the oldest go past this many. */
const MAX_TOASTS = 4;

function region(): HTMLElement {
  return $("#toasts")!;
}

/** Shows a toast; `ms`: its lifetime (paused while the focus is in it), undefined: until dismissed. */
function show(el: HTMLElement, ms?: number): HTMLElement {
  const close = h("button", { class: "toast-close", type: "button", "aria-label": "Dismiss", onclick: () => el.remove() }, "×");
  el.prepend(close);
  region().append(el);
  const all = region().children;
  while (all.length > MAX_TOASTS) all[0]!.remove();
  if (ms === undefined) return el;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const held = () => el.matches(":focus-within");
  const start = () => { clearTimeout(timer); timer = setTimeout(() => { if (!held()) el.remove(); }, ms); };
  // read at the person's pace: the time starts again once the focus leaves
  el.addEventListener("focusout", () => setTimeout(() => { if (!held()) start(); }));
  start();
  return el;
}

export function info(message: string): HTMLElement {
  return show(h("div", { class: "toast info", role: "status" }, h("p", {}, message)), INFO_MS);
}

/** The parts of an error a person needs: what went wrong, what would be accepted, how to fix. */
export function errorParts(body: ErrorBody): HTMLElement[] {
  if (body.error === "version_conflict") {
    const p = h("p", { class: "toast-message" }, CONFLICT_TEXT);
    if (body.card) void conflictMessage(body.card).then((m) => { p.textContent = m.text; });
    return [p];
  }
  if (body.error === "not_found" && /^card\b/.test(body.message)) {
    // in the board's words: an agent deleted the card the person was on
    return [h("p", { class: "toast-message" }, "This card no longer exists: it was deleted.")];
  }
  const opts = body.valid_options?.length ? body.valid_options.map((o) => (typeof o === "string" ? o : JSON.stringify(o))) : [];
  if (body.error === "transition_illegal") {
    // in the board's words: its columns by name, and no advice about a force the board has no control for
    return [h("p", { class: "toast-message" }, "This board does not allow that move."),
      h("p", { class: "valid-options" }, opts.length ? `From here a card can move to: ${opts.map(columnName).join(", ")}.` : "From here a card cannot move on.")];
  }
  const parts: HTMLElement[] = [h("p", { class: "toast-message" }, body.message)];
  const named = body.field === "status" ? columnName : (o: string) => o;
  if (opts.length) parts.push(h("p", { class: "valid-options" }, "Valid options: ", opts.map((o, i) => [i ? ", " : "", h("code", {}, named(o))])));
  if (body.hint && !apiAdvice(body.hint)) parts.push(h("p", { class: "hint" }, body.hint));
  return parts;
}

/** A hint written for API and CLI callers (a route, a command, a flag): nothing a person can do on the board. */
function apiAdvice(hint: string): boolean {
  return /\b(CLI|HTTP)\b|\bcards [a-z]|\b(GET|POST|PATCH|DELETE) \/|(^|\s)--[a-z]/.test(hint);
}

export function toBody(e: unknown): ErrorBody {
  if (e instanceof ApiError) return e.body;
  return { error: "error", message: e instanceof Error ? e.message : String(e) };
}

export function error(e: unknown, title?: string): HTMLElement {
  const body = toBody(e);
  return show(h("div", { class: "toast error", role: "alert", "data-error": body.error },
    title ? h("p", { class: "toast-title" }, title) : null, ...errorParts(body)));
}
