/**
 * Sections of the card detail: repeating entries (with an add form), artifacts (download,
 * upload), links in both directions (with an add form) and comments (updated in place: a
 * new comment adds one item, the others and the comment form stay as they are).
 */
import { leading } from "../domain/codepoints.ts";
import { api, ApiError } from "./api.ts";
import { write, writeEntry, written } from "./actions.ts";
import { markClean } from "./dirty.ts";
import { announce } from "./announce.ts";
import { ago, fmtTime, h, syncChildren } from "./dom.ts";
import { cardRef, entries, label, userChip } from "./fields.ts";
import { changedFields, clearErrors, fieldRow, flagProblems, fullCardId, resolveCardLinks, showFormError, type FieldInput } from "./forms.ts";
import { markdown } from "./markdown.ts";
import { linkTypeName, state, userName } from "./state.ts";
import * as toast from "./toast.ts";
import type { Card, Comment, FieldDef } from "./types.ts";

export function section(title: string, cls: string, ...body: (Node | null)[]): HTMLElement {
  return h("section", { class: `detail-section ${cls}` }, h("h3", {}, title), ...body);
}

/**
 * A button for a write that cannot be undone: the first click asks ("Delete for good?")
 * for a few seconds, the second does it. Refusals are shown as toasts. `seen`, read when
 * the question appears, is what the yes is given to (the card as it was asked about, not
 * as a re-read during the question left it), and is handed to `act`.
 */
export function confirmButton<S>(
  text: string, ask: string | (() => string), attrs: Record<string, string>,
  act: (again?: number, seen?: S) => Promise<unknown | { ask: string; version: number }>, failed: string,
  seen?: () => S,
): HTMLButtonElement {
  const b = h("button", { type: "button", ...attrs }, text);
  /** a name that says what the button is about ("Remove Evidence entry …"): the question is said with it */
  const named = b.getAttribute("aria-label");
  let armed: ReturnType<typeof setTimeout> | undefined;
  /** when the question appeared: a double click is one click, never a yes */
  let armedAt = 0;
  /** set when `act` asked again (the card changed since the person confirmed) */
  let again: number | undefined;
  let seenAtAsk: S | undefined;
  const disarm = () => {
    clearTimeout(armed);
    armed = undefined;
    again = undefined;
    b.textContent = text;
    if (named) b.setAttribute("aria-label", named);
    b.classList.remove("danger");
    // the panel held this part back while the question stood (detail.ts): it follows again
    b.dispatchEvent(new CustomEvent("detail-stale", { bubbles: true }));
  };
  const arm = (question: string) => {
    b.textContent = question;
    if (named) b.setAttribute("aria-label", `${question} (${named})`);
    b.classList.add("danger");
    clearTimeout(armed);
    armedAt = Date.now();
    // the question stands while the button has the focus (leaving it takes the question
    // back); clicked without focus, it goes after a while
    armed = setTimeout(() => { if (document.activeElement !== b) disarm(); }, again === undefined ? CONFIRM_MS : 2 * CONFIRM_MS);
    announce(`${question} Press the button again to confirm.`);
  };
  b.addEventListener("click", () => {
    if (busy(b)) return;
    if (!armed) { seenAtAsk = seen?.(); return arm(typeof ask === "function" ? ask() : ask); }
    if (Date.now() - armedAt < DOUBLE_CLICK_MS) return;
    const version = again;
    disarm();
    setBusy(b, true);
    act(version, seenAtAsk).then((r) => {
      const re = r as { ask?: string; version?: number } | undefined;
      if (re?.ask && re.version !== undefined) { again = re.version; arm(re.ask); }
    }).catch((e) => toast.error(e, failed)).finally(() => setBusy(b, false));
  });
  b.addEventListener("blur", () => { if (armed) disarm(); });
  return b;
}

/** How long an unanswered "... for good?" stands on a button that does not hold the focus. */
const CONFIRM_MS = 10_000;

/** A second click within this is part of a double click: not a confirmation, not a second write. */
export const DOUBLE_CLICK_MS = 500;

/**
 * A button waiting for its write: marked busy (aria-disabled) rather than disabled, so
 * the focus stays on it (a disabled button loses it to the page) and a redraw can put it
 * back; clicks meanwhile are ignored.
 */
export function setBusy(b: HTMLButtonElement, on: boolean): void {
  if (on) b.setAttribute("aria-disabled", "true");
  else b.removeAttribute("aria-disabled");
}
export const busy = (b: HTMLButtonElement): boolean => b.getAttribute("aria-disabled") === "true";

/** Save and Cancel for an inline edit; `save` resolves once written (the panel then redraws). */
function inlineEdit(cls: string, rows: Node[], save: (form: HTMLFormElement) => Promise<unknown>, cancel: () => void): HTMLFormElement {
  const submit = h("button", { type: "submit", class: "primary" }, "Save");
  const form = h("form", { class: `mini-form inline-edit ${cls}` }, ...rows, h("div", { class: "form-error", role: "alert" }),
    h("div", { class: "inline-row" }, submit, h("button", { type: "button", onclick: cancel }, "Cancel")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    try {
      await save(form);
    } catch (e) {
      showFormError(form, e);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

/** A small form: rows, a general error slot, one submit button; `send` returns when written. */
function miniForm(cls: string, button: string, rows: Node[], send: (form: HTMLFormElement) => Promise<unknown>): HTMLFormElement {
  const submit = h("button", { type: "submit" }, button);
  const form = h("form", { class: `mini-form ${cls}` }, ...rows, h("div", { class: "form-error", role: "alert" }), submit);
  // A refusal stays until the person acts on it (the panel holds this part back while one
  // shows, detail.ts): typing in the form, or sending it again, clears it
  form.addEventListener("input", () => { if (clearErrors(form)) form.dispatchEvent(new CustomEvent("detail-stale", { bubbles: true })); });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (busy(submit)) return;
    clearErrors(form);
    setBusy(submit, true);
    try {
      await send(form);
      form.reset(); // before the panel re-renders, so the sent text is not carried over as a draft
      markClean(form);
    } catch (e) {
      showFormError(form, e);
    } finally {
      setBusy(submit, false);
    }
  });
  return form;
}

/** `version` gives the card's version when the entry is sent (the section outlives later writes). */
export function repeatingSection(card: Card, def: FieldDef, version: () => number): HTMLElement {
  const items = Array.isArray(card.fields[def.id]) ? (card.fields[def.id] as unknown[]) : [];
  const inputs = (def.item_fields ?? []).map((f) => fieldRow(f, f.default)).filter((x): x is FieldInput => x !== null);
  const form = miniForm("entry-form", "Add entry", inputs.map((i) => i.el), async () => {
    const bad = inputs.find((i) => i.problem());
    // shown next to its input, as the server's refusals are; nothing is sent half-read
    if (bad) throw new ApiError(0, { error: "validation_failed", field: bad.def.id, message: `${label(bad.def)}: ${bad.problem()}` });
    await resolveCardLinks(inputs);
    const entry: Record<string, unknown> = {};
    for (const i of inputs) { const v = i.read(); if (v !== undefined) entry[i.def.id] = v; }
    // an append means the same over any newer version: an agent's writes meanwhile do not refuse it
    await writeEntry({ ...card, version: version() }, "POST", `/fields/${encodeURIComponent(def.id)}/append`, (v) => ({ version: v, entry }), () => true);
  });
  const list = entries(def, items);
  for (const li of list.querySelectorAll<HTMLElement>(":scope > li[data-entry]")) {
    const entryId = li.dataset.entry!;
    const entry = items.find((x) => (x as { entry_id?: string })?.entry_id === entryId) as Record<string, unknown> | undefined;
    if (entry) li.append(entryActions(card, def, entry, li));
  }
  return section(`${label(def)} (${items.length})`, `repeating field-${def.id}`,
    def.description ? h("p", { class: "desc" }, def.description) : null,
    list,
    h("details", { class: "add" }, h("summary", {}, "Add entry"), form));
}

/** Edit (merge the changed item fields) and Remove for one repeating entry. */
function entryActions(card: Card, def: FieldDef, entry: Record<string, unknown>, li: HTMLElement): HTMLElement {
  const entryId = String(entry.entry_id);
  const path = `/fields/${encodeURIComponent(def.id)}/${encodeURIComponent(entryId)}`;
  /** the entry as the newer card holds it (undefined once removed) */
  const entryIn = (now: Card) => (Array.isArray(now.fields[def.id]) ? (now.fields[def.id] as Array<{ entry_id?: string }>) : []).find((e) => e.entry_id === entryId);
  // every entry has its Edit and Remove: their names say which entry (its first words)
  const first = (def.item_fields ?? []).map((f) => entry[f.id]).find((v) => typeof v === "string" && v.trim()) as string | undefined;
  const which = `${label(def)} entry${first ? ` “${first.length > 40 ? `${leading(first, 40)}…` : first}”` : ""}`;
  const edit = h("button", { type: "button", class: "link-button entry-edit", "aria-label": `Edit ${which}` }, "Edit");
  const back = (shown: Node[]) => {
    li.replaceChildren(...shown);
    li.querySelector<HTMLElement>(".entry-edit")?.focus();
  };
  edit.addEventListener("click", () => {
    const shown = [...li.childNodes];
    const inputs = (def.item_fields ?? []).map((f) => fieldRow(f, entry[f.id])).filter((x): x is FieldInput => x !== null);
    const form = inlineEdit("entry-edit-form", inputs.map((i) => i.el), async () => {
      if (flagProblems(inputs)) return;
      await resolveCardLinks(inputs);
      const changes = changedFields(inputs);
      if (!Object.keys(changes).length) {
        back(shown);
        li.dispatchEvent(new CustomEvent("detail-stale", { bubbles: true }));
        return;
      }
      // from the version this part shows (held back while the edit is open): over a newer
      // one only while the entry is as the person saw it
      await writeEntry(card, "PATCH", path, (v) => ({ version: v, entry: changes }),
        (now) => JSON.stringify(entryIn(now)) === JSON.stringify(entry));
      back(shown); // until the redraw, which keeps the focus on this entry's Edit
    }, () => {
      back(shown);
      li.dispatchEvent(new CustomEvent("detail-stale", { bubbles: true }));
    });
    markClean(form); // Esc keeps what is typed here (dirty.ts)
    li.replaceChildren(form);
    (form.querySelector("input,select,textarea") as HTMLElement | null)?.focus();
  });
  // removed from the version this part shows: over a newer one only while the entry is as shown
  const remove = confirmButton("Remove", "Remove for good?", { class: "link-button entry-remove", "aria-label": `Remove ${which}` },
    () => writeEntry(card, "DELETE", path, () => undefined, (now) => JSON.stringify(entryIn(now)) === JSON.stringify(entry)), "Entry not removed");
  return h("div", { class: "entry-actions" }, edit, remove);
}

/** Upload form for a `local` artifact field: the raw bytes go to POST /cards/{id}/artifacts/{field}. */
export function artifactUpload(card: Card, def: FieldDef): HTMLElement {
  const file = h("input", { type: "file", "aria-label": `Upload ${label(def)}` });
  const form = miniForm("upload-form", "Upload", [file], async () => {
    const f = file.files?.[0];
    if (!f) throw new Error("choose a file first");
    written(await api<Card>("POST", `/cards/${encodeURIComponent(card.id)}/artifacts/${encodeURIComponent(def.id)}`, undefined, f));
  });
  return h("details", { class: "add" }, h("summary", {}, "Upload a file"), form);
}

export function linksSection(card: Card, incoming: Card[]): HTMLElement {
  const out = (card.links ?? []).map((l) => h("li", {},
    h("span", { class: "link-type" }, linkTypeName(l.type_id)), " ", cardRef(l.target),
    l.note ? h("span", { class: "muted" }, ` — ${l.note}`) : null,
    h("button", { type: "button", class: "link-remove icon-button", "aria-label": `Remove link ${l.type_id} ${l.target}`,
      onclick: () => write("DELETE", card.id, `/links/${encodeURIComponent(l.type_id)}/${encodeURIComponent(l.target)}`)
        .catch((e) => toast.error(e, "Could not remove the link")) }, "×")));
  const inc = incoming.flatMap((src) => (src.links ?? []).filter((l) => l.target === card.id).map((l) =>
    h("li", {}, cardRef(src.id), " ", h("span", { class: "link-type" }, linkTypeName(l.type_id)), h("span", { class: "muted" }, " this card"),
      l.note ? h("span", { class: "muted" }, ` — ${l.note}`) : null)));
  const typeSel = h("select", { "aria-label": "Link type", name: "type_id" },
    state.info.workspace.link_types.map((t) => h("option", { value: t.id }, t.name)));
  const target = h("input", { type: "text", name: "target", list: "detail-link-targets", placeholder: "target card id", "aria-label": "Target card", autocomplete: "off" });
  const targets = h("datalist", { id: "detail-link-targets" },
    [...state.cards.values()].filter((c) => c.id !== card.id).slice(0, 300).map((c) => h("option", { value: c.id }, c.title)));
  const note = h("input", { type: "text", name: "note", placeholder: "note (optional)", "aria-label": "Note" });
  const form = miniForm("link-form", "Add link", [h("div", { class: "inline-row" }, typeSel, target, targets, note)], async () => {
    // the board shows short ids: one that names a single card is taken as that card
    await write("POST", card.id, "/links", { type_id: typeSel.value, target: await fullCardId(target.value, "target"), ...(note.value.trim() ? { note: note.value.trim() } : {}) });
  });
  return section("Links", "links",
    h("h4", {}, "From this card"), out.length ? h("ul", { class: "link-list outgoing" }, out) : h("p", { class: "muted" }, "None."),
    h("h4", {}, "To this card"), inc.length ? h("ul", { class: "link-list incoming" }, inc) : h("p", { class: "muted" }, "None."),
    h("details", { class: "add" }, h("summary", {}, "Add link"), form));
}

function commentItem(c: Comment, cardId: string): HTMLElement {
  const body = h("div", { class: "md" });
  body.innerHTML = markdown(c.body); // escaped first, see markdown.ts
  const edit = h("button", { type: "button", class: "link-button comment-edit", "aria-label": `Edit comment by ${userName(c.author)}, ${ago(c.created_at)}` }, "Edit");
  const li = h("li", { class: "comment", "data-comment": c.id, "data-sig": c.edited_at ?? "" },
    h("div", { class: "comment-head" }, userChip(c.author), h("time", { datetime: c.created_at, title: fmtTime(c.created_at) }, ago(c.created_at)),
      c.edited_at ? h("span", { class: "muted" }, " (edited)") : null, edit),
    body);
  const back = (form: HTMLElement) => {
    form.replaceWith(body);
    edit.focus();
  };
  edit.addEventListener("click", () => {
    const text = h("textarea", { name: "body", rows: 4, "aria-label": "Edit comment" });
    text.value = c.body;
    const form = inlineEdit("comment-edit-form", [text], async () => {
      if (!text.value.trim()) throw new Error("write something, or leave the comment as it was");
      if (text.value === c.body) return back(form);
      await write("PATCH", cardId, `/comments/${encodeURIComponent(c.id)}`, { body: text.value });
      back(form);
    }, () => back(form));
    markClean(form); // Esc keeps what is typed here (dirty.ts)
    body.replaceWith(form);
    text.focus();
  });
  return li;
}

/**
 * A card with more comments than this opens with its newest ones and a button for the
 * rest: 500 comments took 0.35-0.45 s to open (their Markdown and layout), 50 take a tenth.
 */
export const COMMENTS_AT_FIRST = 50;

/** The card each comments section last drew (what "Show earlier comments" draws in full). */
const drawnCard = new WeakMap<HTMLElement, Card>();

export function commentsSection(card: Card): HTMLElement {
  const text = h("textarea", { name: "body", rows: 3, placeholder: "Write a comment (markdown)", "aria-label": "Comment", required: true });
  const form = miniForm("comment-form", "Comment", [text], async () => {
    if (!text.value.trim()) throw new Error("write something first");
    await write("POST", card.id, "/comments", { body: text.value });
  });
  const more = h("p", { class: "comments-more muted", hidden: true });
  const sec = section("Comments", "comments", more, h("ol", { class: "comments-list" }), form);
  // the window starts at a comment, not at a count: comments that arrive later are added
  // below, and none being read or edited slides out of it
  const all = card.comments ?? [];
  if (all.length > COMMENTS_AT_FIRST) sec.dataset.from = all[all.length - COMMENTS_AT_FIRST]!.id;
  updateComments(sec, card);
  return sec;
}

/** Brings the comments in line with the card: new and edited ones are drawn, the rest kept. */
export function updateComments(sec: HTMLElement, card: Card): void {
  drawnCard.set(sec, card);
  const list = sec.querySelector<HTMLElement>(".comments-list")!;
  const all = card.comments ?? [];
  const from = sec.dataset.from === undefined ? 0 : Math.max(0, all.findIndex((c) => c.id === sec.dataset.from));
  const drawn = new Map([...list.querySelectorAll<HTMLElement>(":scope > li")].map((li) => [li.dataset.comment, li]));
  const want = all.slice(from).map((c) => {
    const old = drawn.get(c.id);
    // a comment being edited here stays as it is, even if someone else edited it meanwhile
    return old && (old.dataset.sig === (c.edited_at ?? "") || old.querySelector(".inline-edit")) ? old : commentItem(c, card.id);
  });
  // a comment drawn anew (edited) keeps the focus on its Edit button
  const focused = document.activeElement?.closest<HTMLElement>(".comments-list > li")?.dataset.comment;
  syncChildren(list, want);
  if (focused && !document.activeElement?.closest(".comments-list")) list.querySelector<HTMLElement>(`li[data-comment="${CSS.escape(focused)}"] .comment-edit`)?.focus();
  list.hidden = want.length === 0;
  showEarlier(sec, from, all.length);
  const title = `Comments (${all.length})`;
  const head = sec.querySelector("h3")!;
  if (head.textContent !== title) head.textContent = title;
}

/** Says how many older comments are not drawn, with a button that draws them all. */
function showEarlier(sec: HTMLElement, hidden: number, total: number): void {
  const more = sec.querySelector<HTMLElement>(".comments-more")!;
  more.hidden = hidden === 0;
  if (hidden === 0) return;
  const fmt = (n: number) => n.toLocaleString("en-US");
  // one button for as long as it shows: a comment arriving while it has the focus keeps it there
  let button = more.querySelector<HTMLButtonElement>("button");
  if (!button) {
    const b = button = h("button", { type: "button", class: "link-button comments-earlier" });
    b.addEventListener("click", () => {
      delete sec.dataset.from;
      updateComments(sec, drawnCard.get(sec)!);
      // the button is gone: the focus goes to the first comment, where reading goes on
      sec.querySelector<HTMLElement>(".comments-list > li .comment-edit")?.focus();
    });
    more.replaceChildren(h("span"), " ", b);
  }
  more.querySelector("span")!.textContent = `Showing the newest ${fmt(total - hidden)} of ${fmt(total)} comments.`;
  const label = `Show ${fmt(hidden)} earlier comment${hidden === 1 ? "" : "s"}`;
  if (button.textContent !== label) button.textContent = label;
}
