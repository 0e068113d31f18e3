/**
 * Inputs generated from FieldDefs (create form, edit form, repeating entries) and reading
 * them back as field values. Errors from the server are placed next to the named field.
 */
import { ApiError, listCards } from "./api.ts";
import { h, shortId, type Child } from "./dom.ts";
import { label } from "./fields.ts";
import { state } from "./state.ts";
import { errorParts, toBody } from "./toast.ts";
import type { FieldDef } from "./types.ts";

export interface FieldInput {
  def: FieldDef;
  el: HTMLElement;
  /** the value to send; undefined when left empty */
  read(): unknown;
  /** true once the person changed the control (a value it could not show is kept until then) */
  changed(): boolean;
  /** what makes the input unusable as typed (a half-filled date), else undefined */
  problem(): string | undefined;
}

let uid = 0;

function toLocalInput(iso: unknown): string {
  if (typeof iso !== "string") return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * Options plus any held value they lack (a user registered after the page loaded, an
 * option the definitions dropped since): shown, so it is neither hidden nor lost.
 */
function withHeld(options: { value: string; text: string }[], held: unknown, note: string): { value: string; text: string }[] {
  const values = Array.isArray(held) ? held.map(String) : held !== undefined && held !== null && held !== "" ? [String(held)] : [];
  const extra = values.filter((v) => !options.some((o) => o.value === v));
  return extra.length ? [...options, ...extra.map((v) => ({ value: v, text: note ? `${v} (${note})` : v }))] : options;
}

function checks(name: string, options: { value: string; text: string }[], selected: unknown): { el: HTMLElement; read(): string[] | undefined } {
  const sel = new Set(Array.isArray(selected) ? selected.map(String) : selected ? [String(selected)] : []);
  const boxes = options.map((o) => h("input", { type: "checkbox", name, value: o.value, checked: sel.has(o.value) }));
  const el = h("div", { class: "checks", role: "group" }, options.map((o, i) => h("label", { class: "check" }, boxes[i]!, o.text)));
  return { el, read: () => { const v = boxes.filter((b) => b.checked).map((b) => b.value); return v.length ? v : undefined; } };
}

export function select(id: string, options: { value: string; text: string }[], value: unknown, blank: string | null): HTMLSelectElement {
  const el = h("select", { id },
    blank !== null ? h("option", { value: "" }, blank) : null,
    options.map((o) => h("option", { value: o.value, selected: o.value === value }, o.text)));
  if (value !== undefined && value !== null) el.value = String(value);
  return el;
}

const userOptions = () => state.info.workspace.users.map((u) => ({ value: u.id, text: u.display_name ? `${u.display_name} (${u.id})` : u.id }));

/**
 * The control for one field, pre-filled with `value`; null for fields edited elsewhere
 * (repeating, local artifacts). `blank`: whether a single choice may be left empty (a
 * create form leaves no blank where the server would put the default back).
 */
export function control(def: FieldDef, value: unknown, id: string, blank = true): { el: HTMLElement; read(): unknown; problem?(): string | undefined } | null {
  const str = (v: string) => (v.trim() === "" ? undefined : v);
  switch (def.type) {
    case "text": {
      const el = h("textarea", { id, rows: 4, placeholder: "Markdown" });
      el.value = typeof value === "string" ? value : "";
      return { el, read: () => str(el.value) };
    }
    case "number": {
      const el = h("input", { id, type: "number", step: "any", min: def.min, max: def.max, value: typeof value === "number" ? value : "" });
      return { el, read: () => (el.value === "" ? undefined : Number(el.value)) };
    }
    case "date": {
      const initial = toLocalInput(value);
      const el = h("input", { id, type: "datetime-local", value: initial });
      return {
        el,
        read: () => (!el.value ? undefined : el.value === initial ? value : new Date(el.value).toISOString()),
        // a date typed without its time (or half a date) reads as empty: say so, never drop it
        problem: () => (el.validity.badInput ? "enter the whole date and time, or clear it" : undefined),
      };
    }
    case "enum": {
      const opts = withHeld((def.options ?? []).map((o) => ({ value: o, text: o })), value, "not an option now");
      if (def.multiple) return checks(id, opts, value);
      const el = select(id, opts, value, blank ? "—" : null);
      return { el, read: () => str(el.value) };
    }
    case "user": {
      const opts = withHeld(userOptions(), value, "");
      if (def.multiple) return checks(id, opts, value);
      const el = select(id, opts, value, blank ? "—" : null);
      return { el, read: () => str(el.value) };
    }
    case "tags":
      return tagControl(id, value);
    case "card_link": {
      const list = `${id}-cards`;
      const el = h("input", { id, type: "text", list, placeholder: "card_…", value: typeof value === "string" ? value : "", autocomplete: "off" });
      const dl = h("datalist", { id: list }, [...state.cards.values()]
        .filter((c) => !def.target_type || c.type_id === def.target_type).slice(0, 300)
        .map((c) => h("option", { value: c.id }, `${shortId(c.id)} ${c.title}`)));
      return { el: h("span", { class: "link-input" }, el, dl), read: () => str(el.value.trim()) };
    }
    case "artifact": {
      if (def.artifact_policy !== "uri") return null;
      const cur = value && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
      const el = h("input", { id, type: "url", placeholder: "https://…", value: typeof cur?.uri === "string" ? cur.uri : "" });
      return { el, read: () => (el.value.trim() ? { ...(cur ?? {}), uri: el.value.trim() } : undefined) };
    }
    case "repeating":
      return null;
    default: {
      const el = h("input", { id, type: "text", value: typeof value === "string" ? value : "", class: def.display === "monospace" ? "mono" : undefined });
      return { el, read: () => str(el.value) };
    }
  }
}

/** Workspace tags: checkboxes under the locked policy, a comma list under the open one. */
export function tagControl(id: string, value: unknown): { el: HTMLElement; read(): string[] | undefined } {
  const ws = state.info.workspace;
  if (ws.settings.tag_policy === "open") {
    const el = h("input", { id, type: "text", placeholder: ws.tag_set.join(", "), value: Array.isArray(value) ? value.join(", ") : "" });
    return { el, read: () => { const v = el.value.split(",").map((s) => s.trim()).filter(Boolean); return v.length ? v : undefined; } };
  }
  const extra = Array.isArray(value) ? value.map(String).filter((t) => !ws.tag_set.includes(t)) : [];
  return checks(id, [...ws.tag_set, ...extra].map((t) => ({ value: t, text: t })), value);
}

/**
 * The label of a form row: a <label> for one control; a group of checkboxes (tags, a
 * multiple choice) is named by the text instead (aria-labelledby), as a <label> cannot.
 * `required` marks it with "*", read out as "required", and sets aria-required on a control that takes it.
 */
export function fieldLabel(id: string, control: HTMLElement, text: Child, required = false): HTMLElement {
  const mark = required ? [h("span", { class: "req", "aria-hidden": "true" }, " *"), h("span", { class: "sr-only" }, " (required)")] : [];
  if (control.getAttribute("role") !== "group") {
    if (required) control.querySelector("input,select,textarea")?.setAttribute("aria-required", "true");
    if (required && control.matches("input,select,textarea")) control.setAttribute("aria-required", "true");
    return h("label", { for: id }, text, mark);
  }
  control.setAttribute("aria-labelledby", `${id}-label`);
  return h("span", { class: "label", id: `${id}-label` }, text, mark);
}

/** Adds `id` to what describes `el` (aria-describedby), once. */
function describedBy(el: Element, id: string): void {
  const ids = (el.getAttribute("aria-describedby") ?? "").split(" ").filter(Boolean);
  if (!ids.includes(id)) el.setAttribute("aria-describedby", [...ids, id].join(" "));
}

let slotUid = 0;
/** Marks the controls as invalid, described by the error slot that says why (read with the control). */
function markInvalid(controls: Iterable<Element>, slot: Element): void {
  slot.id ||= `error-${++slotUid}`;
  for (const c of controls) {
    c.setAttribute("aria-invalid", "true");
    describedBy(c, slot.id);
  }
}

/** Empties the form's error slots and unmarks its controls; true when one showed something. */
export function clearErrors(form: HTMLElement): boolean {
  const shown = [...form.querySelectorAll(".field-error, .form-error")].filter((el) => el.childNodes.length > 0);
  for (const slot of shown) slot.replaceChildren();
  for (const c of form.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
  return shown.length > 0;
}

/** A labelled row for one field: label, control, description, and a slot for its error. */
export function fieldRow(def: FieldDef, value: unknown, o: { blank?: boolean } = {}): FieldInput | null {
  const id = `f${++uid}-${def.id}`;
  const c = control(def, value, id, o.blank ?? true);
  if (!c) return null;
  const initial = JSON.stringify(c.read() ?? null);
  const desc = def.description ? h("small", { class: "desc", id: `${id}-desc` }, def.description) : null;
  const group = c.el.getAttribute("role") === "group";
  if (desc) for (const el of group ? [c.el] : [c.el, ...c.el.querySelectorAll("input,select,textarea")].filter((x) => x.matches("input,select,textarea"))) describedBy(el, desc.id);
  const el = h("div", { class: `form-field t-${def.type}`, "data-field": def.id },
    fieldLabel(id, c.el, [label(def), def.deprecated ? h("span", { class: "muted" }, " (deprecated)") : null], def.required),
    c.el,
    desc,
    h("div", { class: "field-error", role: "alert" }));
  return { def, el, read: c.read, changed: () => JSON.stringify(c.read() ?? null) !== initial, problem: () => c.problem?.() };
}

/** Marks every input that cannot be read as typed; true when there was one (the first gets the focus). */
export function flagProblems(inputs: FieldInput[]): boolean {
  let first: HTMLElement | undefined;
  for (const i of inputs) {
    const p = i.problem();
    if (!p) continue;
    const slot = i.el.querySelector(".field-error");
    if (slot) { slot.replaceChildren(`${label(i.def)}: ${p}`); markInvalid(i.el.querySelectorAll("input,select,textarea"), slot); }
    first ??= i.el;
  }
  (first?.querySelector("input,select,textarea") as HTMLElement | null)?.focus();
  return first !== undefined;
}

/** Shows a server refusal next to the field it names, or in the form's general error slot. */
export function showFormError(form: HTMLElement, e: unknown): void {
  clearErrors(form);
  const body = toBody(e);
  // `evidence.note` names the item field `note` in an entry form, the field `evidence` elsewhere
  const path = body.field?.split(/[.[\]]+/).filter(Boolean) ?? [];
  const row = [path[0], path.at(-1)].map((n) => (n ? form.querySelector(`.form-field[data-field="${CSS.escape(n)}"] .field-error`) : null)).find((x) => x) ?? null;
  const slot = row ?? form.querySelector(".form-error");
  slot?.replaceChildren(...errorParts(body));
  // the controls it is about (a row's, or one named like the field: a link's target) say they are invalid, and why
  const named = !row && path[0] ? form.querySelectorAll(`[name="${CSS.escape(path[0])}"]`) : [];
  if (slot) markInvalid(row ? row.closest(".form-field")!.querySelectorAll("input,select,textarea") : named, slot);
  (row?.closest(".form-field")?.querySelector("input,select,textarea") as HTMLElement | null)?.focus();
}

/**
 * The fields the person changed (null removes a key). A control they left alone is never
 * sent, even when it could not show the stored value exactly: a save changes only what
 * was edited.
 */
export function changedFields(inputs: FieldInput[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const i of inputs) if (i.changed()) out[i.def.id] = i.read() ?? null;
  return out;
}

/**
 * The full id for what a person typed where a card id goes: the board shows short ids
 * (`975f8bd0`), so one that names exactly one card is taken as that card. Anything else
 * is left as typed (the server then says what is wrong with it).
 */
export async function fullCardId(typed: string, field: string): Promise<string> {
  const text = typed.trim();
  const short = /^(?:card_)?([0-9a-f]{8})$/i.exec(text)?.[1]?.toLowerCase();
  if (!short) return text;
  // the search matches the id in other cards' values too (a card that links to it): the
  // card itself may be on a later page of the hits, so they are read on, a few pages
  const found = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const res = await listCards({ q: short, limit: 200, cursor });
    for (const c of res.items) if (shortId(c.id) === short) found.add(c.id);
    if (!res.next_cursor) break;
    cursor = res.next_cursor;
  }
  if (found.size === 1) return [...found][0]!;
  throw new ApiError(0, found.size === 0
    ? { error: "not_found", field, value: text, message: `no card has the id ${short}`, hint: "check the id on the card (the short id is the 8 characters after card_), or paste the full id" }
    : { error: "validation_failed", field, value: text, message: `${short} is the start of ${found.size} cards' ids`, valid_options: [...found], hint: "paste the full id of the one you mean" });
}

/** Rewrites the card-link inputs that hold a short id to the card's full id (before a form is read); refuses one that names no card or several. */
export async function resolveCardLinks(inputs: FieldInput[]): Promise<void> {
  await Promise.all(inputs.filter((i) => i.def.type === "card_link").map(async (i) => {
    const el = i.el.querySelector<HTMLInputElement>("input");
    if (el?.value.trim()) el.value = await fullCardId(el.value, i.def.id);
  }));
}

/**
 * The checks before a form is sent: half-typed inputs are flagged, short ids resolved.
 * `button` is disabled from the first check on (a second Enter meanwhile sends nothing)
 * and stays so when the form may be sent; false (button enabled again) when it may not.
 */
export async function readyToSend(form: HTMLElement, inputs: FieldInput[], button: HTMLButtonElement): Promise<boolean> {
  if (button.disabled || flagProblems(inputs)) return false;
  button.disabled = true;
  try {
    await resolveCardLinks(inputs);
    return true;
  } catch (e) {
    button.disabled = false;
    showFormError(form, e);
    return false;
  }
}