/**
 * Messages in the corner: errors show the envelope's message, valid options and hint; a
 * version conflict says who changed the card meanwhile instead.
 */
import { ApiError } from "./api.ts";
import { conflictMessage, CONFLICT_TEXT } from "./conflict.ts";
import { h, $ } from "./dom.ts";
import type { ErrorBody } from "./types.ts";

const LIFETIME_MS = 8000;

function region(): HTMLElement {
  return $("#toasts")!;
}

function show(el: HTMLElement, ms: number): HTMLElement {
  const close = h("button", { class: "toast-close", type: "button", "aria-label": "Dismiss", onclick: () => el.remove() }, "×");
  el.prepend(close);
  region().append(el);
  setTimeout(() => el.remove(), ms);
  return el;
}

export function info(message: string): HTMLElement {
  return show(h("div", { class: "toast info", role: "status" }, h("p", {}, message)), 4000);
}

/** The parts of an error a person needs: what went wrong, what would be accepted, how to fix. */
export function errorParts(body: ErrorBody): HTMLElement[] {
  if (body.error === "version_conflict") {
    const p = h("p", { class: "toast-message" }, CONFLICT_TEXT);
    if (body.card) void conflictMessage(body.card).then((m) => { p.textContent = m.text; });
    return [p];
  }
  const opts = body.valid_options?.length ? body.valid_options.map((o) => (typeof o === "string" ? o : JSON.stringify(o))) : [];
  const parts: HTMLElement[] = [h("p", { class: "toast-message" }, body.message)];
  if (opts.length) parts.push(h("p", { class: "valid-options" }, "Valid options: ", opts.map((o, i) => [i ? ", " : "", h("code", {}, o)])));
  if (body.hint) parts.push(h("p", { class: "hint" }, body.hint));
  return parts;
}

export function toBody(e: unknown): ErrorBody {
  if (e instanceof ApiError) return e.body;
  return { error: "error", message: e instanceof Error ? e.message : String(e) };
}

export function error(e: unknown, title?: string): HTMLElement {
  const body = toBody(e);
  return show(h("div", { class: "toast error", role: "alert", "data-error": body.error },
    title ? h("p", { class: "toast-title" }, title) : null, ...errorParts(body)), LIFETIME_MS);
}
