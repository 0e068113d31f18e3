/**
 * The card detail panel: header, status/owner controls, every field by type and display,
 * an edit form (title, tags, fields), then entries, links, comments and history.
 */
import { getCard, history, listAll } from "./api.ts";
import { onCardWritten, patch } from "./actions.ts";
import { cardElement } from "./board.ts";
import { h, $, fmtTime, ago, shortId } from "./dom.ts";
import { isEmpty, label, renderValue } from "./fields.ts";
import { changedFields, fieldRow, showFormError, tagControl, type FieldInput } from "./forms.ts";
import { icon } from "./icons.ts";
import { restoreDrafts, saveDrafts } from "./drafts.ts";
import { allowedColumns, allowedTargets, cardType, columnName, state } from "./state.ts";
import { breachBadges } from "./breaches.ts";
import { conflictMessage } from "./conflict.ts";
import { anyDirty, markAllClean } from "./dirty.ts";
import { artifactUpload, commentsSection, historySection, linksSection, repeatingSection, section } from "./detail-parts.ts";
import * as toast from "./toast.ts";
import type { Card } from "./types.ts";

let current: Card | null = null;
/** the card whose content the panel shows (drafts carry over only for the same card) */
let rendered = "";
let editing = false;
let loadSeq = 0;
let onClose: (() => void) | null = null;

function panel(): HTMLElement {
  return $("#detail")!;
}

export function isOpen(): boolean {
  return !panel().hidden;
}

/** An edit form is open, or a comment, link, entry or upload form holds typed input. */
export function editInProgress(): boolean {
  return editing || anyDirty(panel());
}

export function setCloseHandler(fn: () => void): void {
  onClose = fn;
}

/** Opens (or re-reads) a card in the panel. */
export async function openDetail(id: string, focus = true): Promise<void> {
  const mine = ++loadSeq;
  state.openCard = id;
  const p = panel();
  if (p.hidden || current?.id !== id) {
    editing = false;
    p.hidden = false;
    document.body.classList.add("detail-open");
    rendered = "";
    p.replaceChildren(h("p", { class: "muted loading" }, "Loading…"));
  }
  try {
    const [card, incoming, hist] = await Promise.all([
      getCard(id),
      listAll({ link_target: id, include: "links" }, 200),
      history(id).catch(() => ({ items: [] })),
    ]);
    if (mine !== loadSeq || state.openCard !== id) return;
    current = card;
    if (editing) return; // keep the user's edits; the save carries the version and reports conflicts
    const drafts = rendered === id ? saveDrafts(p) : null;
    render(card, incoming.items, hist.items);
    markAllClean(p); // what was drawn is clean; restored drafts are edits in progress
    rendered = id;
    if (drafts) restoreDrafts(p, drafts);
    else if (focus) $("#detail-title")?.focus();
  } catch (e) {
    if (mine !== loadSeq) return;
    p.replaceChildren(h("div", { class: "detail-head" }, closeButton()), ...toast.errorParts(toast.toBody(e)));
  }
}

export function closeDetail(): void {
  const p = panel();
  if (p.hidden) return;
  const id = state.openCard;
  p.hidden = true;
  p.replaceChildren();
  document.body.classList.remove("detail-open");
  state.openCard = "";
  current = null;
  rendered = "";
  editing = false;
  onClose?.();
  cardElement(id)?.focus();
}

/** Re-reads the open card after a live event, unless it is being edited. */
export function refreshDetail(): void {
  if (state.openCard && !editing) void openDetail(state.openCard, false);
}

onCardWritten((card) => {
  if (card.id === state.openCard && !editing) void openDetail(card.id, false);
});

function closeButton(): HTMLElement {
  return h("button", { type: "button", class: "icon-button detail-close", "aria-label": "Close card (Esc)", onclick: closeDetail }, "×");
}

function render(card: Card, incoming: Card[], hist: { at: string; actor: string; type: string; summary: string }[]): void {
  const type = cardType(card.type_id);
  const defs = type?.fields ?? [];
  const blocked = state.blocked.has(card.id);
  const head = h("header", { class: "detail-head" },
    h("div", { class: "detail-kicker" }, icon(type?.icon), " ", type?.name ?? card.type_id, " · ",
      h("button", { type: "button", class: "link-button mono", title: `Copy ${card.id}`,
        onclick: () => void navigator.clipboard?.writeText(card.id).then(() => toast.info(`Copied ${card.id}`)) }, shortId(card.id)),
      h("span", { class: "muted detail-version" }, ` · v${card.version}`),
      blocked ? h("span", { class: "blocked-badge" }, "blocked") : null,
      breachBadges(card.id)),
    h("h2", { id: "detail-title", tabindex: "-1" }, card.title),
    closeButton());

  // the moves a drag would allow; the others stay listed but cannot be picked
  const targets = allowedTargets(card.status, card.type_id);
  const statusSel = h("select", { id: "detail-status", "aria-label": "Status" },
    allowedColumns(card.type_id).map((c) => {
      const ok = c === card.status || !targets || targets.has(c);
      return h("option", { value: c, selected: c === card.status, disabled: !ok, title: ok ? undefined : `${columnName(card.status)} cannot move to ${columnName(c)} on this board` },
        ok ? columnName(c) : `${columnName(c)} (not allowed from here)`);
    }));
  statusSel.addEventListener("change", () => patch(card, { status: statusSel.value }).catch((e) => {
    statusSel.value = card.status;
    toast.error(e, "Status not changed");
  }));
  const ownerSel = h("select", { id: "detail-owner", "aria-label": "Owner" }, h("option", { value: "" }, "Unowned"),
    state.info.workspace.users.map((u) => h("option", { value: u.id, selected: u.id === card.owner }, u.display_name || u.id)));
  ownerSel.addEventListener("change", () => patch(card, { owner: ownerSel.value }).catch((e) => {
    ownerSel.value = card.owner ?? "";
    toast.error(e, "Owner not changed");
  }));

  const meta = h("dl", { class: "detail-meta" },
    h("dt", {}, h("label", { for: "detail-status" }, "Status")), h("dd", {}, statusSel,
      h("span", { class: "muted" }, ` since ${ago(card.status_since)}`)),
    h("dt", {}, h("label", { for: "detail-owner" }, "Owner")), h("dd", {}, ownerSel),
    h("dt", {}, "Tags"), h("dd", {}, card.tags.length ? h("span", { class: "tags" }, card.tags.map((t) => h("span", { class: "tag" }, t))) : h("span", { class: "muted" }, "none")),
    h("dt", {}, "Created"), h("dd", {}, `${fmtTime(card.created_at)} by ${card.created_by}`),
    h("dt", {}, "Updated"), h("dd", { title: fmtTime(card.updated_at) }, ago(card.updated_at)));

  const plain = defs.filter((d) => d.type !== "repeating" && d.display !== "hidden");
  const fieldList = h("dl", { class: "detail-fields" }, plain.map((d) => [
    h("dt", { title: d.description ?? "" }, label(d)),
    h("dd", { class: `t-${d.type}${d.display ? ` d-${d.display}` : ""}`, "data-field": d.id },
      isEmpty(card.fields[d.id]) ? h("span", { class: "muted" }, "—") : renderValue(d, card.fields[d.id], "detail"),
      d.type === "artifact" && d.artifact_policy !== "uri" ? artifactUpload(card, d) : null),
  ]));
  const body = h("div", { class: "detail-body" },
    meta,
    h("div", { class: "detail-actions" }, h("button", { type: "button", id: "detail-edit", onclick: () => startEdit(card, body) }, "Edit")),
    section("Fields", "fields", fieldList),
    ...defs.filter((d) => d.type === "repeating" && d.display !== "hidden").map((d) => repeatingSection(card, d)),
    linksSection(card, incoming),
    commentsSection(card),
    historySection(hist));
  panel().replaceChildren(head, body);
}

/** Replaces the panel body with a form for title, tags and every field; saves a PATCH of the changes. */
function startEdit(card: Card, body: HTMLElement): void {
  editing = true;
  let baseVersion = card.version;
  let attempt = 0;
  const title = h("input", { id: "edit-title", type: "text", value: card.title, required: true });
  const tags = tagControl("edit-tags", card.tags);
  const inputs = (cardType(card.type_id)?.fields ?? []).map((d) => fieldRow(d, card.fields[d.id])).filter((x): x is FieldInput => x !== null);
  const save = h("button", { type: "submit", class: "primary" }, "Save");
  const form = h("form", { class: "card-form edit-form" },
    h("div", { class: "form-field", "data-field": "title" }, h("label", { for: "edit-title" }, "Title"), title, h("div", { class: "field-error", role: "alert" })),
    h("div", { class: "form-field", "data-field": "tags" }, h("span", { class: "label" }, "Tags"), tags.el, h("div", { class: "field-error", role: "alert" })),
    ...inputs.map((i) => i.el),
    h("div", { class: "form-error", role: "alert", tabindex: "-1" }),
    h("footer", { class: "dialog-actions" },
      h("button", { type: "button", onclick: () => { editing = false; void openDetail(card.id, false); } }, "Cancel"), save));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // a message from an earlier Save no longer applies to this one
    for (const slot of form.querySelectorAll(".field-error, .form-error")) slot.replaceChildren();
    const mine = ++attempt;
    const changes: Record<string, unknown> = {};
    if (title.value !== card.title) changes.title = title.value;
    const newTags = tags.read() ?? [];
    if (JSON.stringify(newTags) !== JSON.stringify(card.tags)) changes.tags = newTags;
    const fields = changedFields(inputs, card.fields);
    if (Object.keys(fields).length) changes.fields = fields;
    if (!Object.keys(changes).length) { editing = false; void openDetail(card.id, false); return; }
    save.disabled = true;
    try {
      // the version the edit started from (or the one a conflict showed): a concurrent change is a conflict
      await patch({ ...card, version: baseVersion }, changes);
      editing = false;
      toast.info("Saved");
      void openDetail(card.id, false);
    } catch (e) {
      const body = toast.toBody(e);
      if (body.error === "version_conflict" && body.card) {
        // keep what the user typed (its changes are still taken against the card they
        // edited, so nothing they left alone is reverted); the next Save applies them over
        // the version the server now has
        baseVersion = body.card.version;
        const version = panel().querySelector(".detail-version");
        if (version) version.textContent = ` · v${body.card.version}`;
        const note = form.querySelector(".form-error") as HTMLElement;
        const say = (who: string) => note.replaceChildren(`${who} changed this card while you edited it (now v${body.card!.version}). Your edits are kept: Save again to apply them over it, or Cancel.`);
        say("Someone");
        void conflictMessage(body.card).then((m) => { if (mine === attempt && m.who) say(`Someone (${m.who})`); });
        note.scrollIntoView({ block: "nearest" });
        note.focus();
      } else {
        showFormError(form, e);
        (form.querySelector(".form-error") as HTMLElement | null)?.scrollIntoView({ block: "nearest" });
      }
    } finally {
      save.disabled = false;
    }
  });
  body.replaceChildren(form);
  title.focus();
}
