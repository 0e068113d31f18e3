/**
 * The card detail panel: header, status/owner controls, every field by type and display,
 * an edit form (title, tags, fields), then entries, links, comments and history.
 * A live change of the open card is read at most once a second and updates only the parts
 * that changed (a new comment adds one item), so typing in a form is never redrawn away.
 */
import { api, cardPath, getCard, history, listAll } from "./api.ts";
import { onUsersChanged, readUsersAgain } from "./users.ts";
import { onCardWritten, patch } from "./actions.ts";
import { cardElement, renderLanes } from "./board.ts";
import { refreshCards } from "./data.ts";
import { h, $, fmtTime, ago, shortId, throttle } from "./dom.ts";
import { changedFields, clearErrors, fieldLabel, fieldRow, readyToSend, showFormError, tagControl, type FieldInput } from "./forms.ts";
import { restoreDrafts, saveDrafts } from "./drafts.ts";
import { cardType, state, userName } from "./state.ts";
import { conflictMessage } from "./conflict.ts";
import { anyDirty, markAllClean } from "./dirty.ts";
import { commentsSection, confirmButton, linksSection, repeatingSection, updateComments } from "./detail-parts.ts";
import { badges, conditions, fieldsSection, head, meta } from "./detail-top.ts";
import { drawHistory, historySection, refreshHistory, setHistory } from "./history.ts";
import * as toast from "./toast.ts";
import type { Card } from "./types.ts";

let current: Card | null = null;
/** the card whose content the panel shows (a re-read of it updates the parts that changed) */
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
  return editing || anyDirty(panel()) || panel().querySelector(".inline-edit") !== null;
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
  const again = rendered === id;
  try {
    const [card, incoming, hist] = await Promise.all([
      getCard(id),
      listAll({ link_target: id, include: "links" }, 200),
      again ? refreshHistory(id).catch(() => false) : history(id).catch(() => ({ items: [] })),
    ]);
    if (mine !== loadSeq || state.openCard !== id) return;
    current = card;
    learnUsers(card);
    if (editing) return; // keep the user's edits; the save carries the version and reports conflicts
    if (again) {
      update(card, incoming.items, hist === true);
      return;
    }
    if (typeof hist === "object") setHistory(id, hist.items);
    render(card, incoming.items);
    markAllClean(p);
    rendered = id;
    if (focus) $("#detail-title")?.focus();
  } catch (e) {
    if (mine !== loadSeq) return;
    const body = toast.toBody(e);
    // deleted under the person (an agent): the panel stays, with what they typed, and says so
    if (again && body.error === "not_found") { markDeleted(p); return; }
    p.replaceChildren(h("div", { class: "detail-head" }, closeButton()), ...toast.errorParts(body));
    rendered = "";
  }
}

/**
 * The open card was deleted: its panel stays as it was, typed text included (to copy it
 * elsewhere), with a notice on top; nothing in it can be sent any more.
 */
function markDeleted(p: HTMLElement): void {
  if (p.querySelector(".detail-deleted")) return;
  const note = h("p", { class: "detail-deleted", role: "alert", tabindex: "-1" }, "This card was deleted. What you typed here stays until you close the panel; it can no longer be saved.");
  p.querySelector(".detail-head")?.after(note);
  for (const el of p.querySelectorAll<HTMLButtonElement | HTMLSelectElement>(".detail-body button, .detail-body select, #detail-delete")) el.disabled = true;
  for (const el of p.querySelectorAll<HTMLTextAreaElement | HTMLInputElement>(".detail-body textarea, .detail-body input")) el.readOnly = true;
  if (!p.contains(document.activeElement)) note.focus();
}

export function closeDetail(): void {
  const p = panel();
  if (p.hidden) return;
  const id = state.openCard;
  const lane = current?.id === id ? current.status : "";
  p.hidden = true;
  p.replaceChildren();
  document.body.classList.remove("detail-open");
  state.openCard = "";
  current = null;
  rendered = "";
  editing = false;
  onClose?.();
  // back to the card, or (deleted) to the board's roving card, or (none left) to the lane
  // the card was in: the keyboard stays on the board, not at the page's top
  (cardElement(id) ?? document.querySelector<HTMLElement>('#board .card[tabindex="0"]') ?? document.querySelector<HTMLElement>("#board .card")
    ?? document.querySelector<HTMLElement>(`#board .lane[data-lane="${CSS.escape(lane)}"] .lane-cards`) ?? document.querySelector<HTMLElement>("#board .lane-cards"))?.focus();
}

/** a busy card is re-read at most this often */
const REFRESH_EVERY_MS = 1000;
const refreshSoon = throttle(() => (state.openCard && !editing ? openDetail(state.openCard, false) : undefined), REFRESH_EVERY_MS);

/** Re-reads the open card after a live event (throttled), unless it is being edited. */
export function refreshDetail(): void {
  if (state.openCard && !editing) refreshSoon();
}

onCardWritten((card) => {
  // what the person just wrote is what the pickers compare with from now on, before the re-read
  if (current?.id === card.id && card.version >= current.version) current = card;
  if (card.id === state.openCard && !editing) void openDetail(card.id, false);
});
// an inline edit ended without a write (Cancel): the parts it held back are read again
document.addEventListener("detail-stale", () => refreshDetail());

function closeButton(): HTMLElement {
  return h("button", { type: "button", class: "icon-button detail-close", "aria-label": "Close card (Esc)", onclick: closeDetail }, "×");
}

/** The card as the panel shows it now (handlers outlive the part that drew them). */
function latest(card: Card): Card {
  return current?.id === card.id ? current : card;
}

/** A part of the body, redrawn only when what it shows (`sig`) changed. */
interface Part { key: string; sig: string; draw(): HTMLElement }

function parts(card: Card, incoming: Card[]): Part[] {
  const fields = cardType(card.type_id)?.fields ?? [];
  const repeating = fields.filter((d) => d.type === "repeating" && d.display !== "hidden");
  const json = JSON.stringify;
  return [
    // the actor too: Claim and Release depend on who the person acts as
    { key: "meta", sig: json([card.status, card.status_since, card.owner, card.tags, state.actor, state.info.workspace.users.length]), draw: () => meta(card, () => latest(card)) },
    { key: "fields", sig: json(fields.filter((d) => d.type !== "repeating").map((d) => card.fields[d.id])), draw: () => fieldsSection(card) },
    ...repeating.map((d) => ({ key: `field-${d.id}`, sig: json(card.fields[d.id]), draw: () => repeatingSection(card, d, () => latest(card).version) })),
    { key: "links", sig: json([card.links, incoming.map((c) => [c.id, c.links])]), draw: () => linksSection(card, incoming) },
  ];
}

function drawPart(part: Part): HTMLElement {
  const el = part.draw();
  el.dataset.part = part.key;
  el.dataset.sig = part.sig;
  return el;
}

function render(card: Card, incoming: Card[]): void {
  const [metaPart, ...sections] = parts(card, incoming).map(drawPart);
  const body = h("div", { class: "detail-body" },
    conditions(card),
    metaPart,
    h("div", { class: "detail-actions" }, h("button", { type: "button", id: "detail-edit", onclick: () => startEdit(latest(card), body) }, "Edit"),
      // a card someone holds: the question names them (an agent may be working on it)
      confirmButton("Delete", () => { const now = latest(card); return now.owner ? `${userName(now.owner)} holds it: delete for good?` : "Delete for good?"; }, { id: "detail-delete" }, (again, seen) => deleteCard(seen ?? latest(card), again), "Card not deleted", () => latest(card))),
    ...sections,
    commentsSection(card),
    historySection());
  panel().replaceChildren(head(card, closeButton()), body);
}

/**
 * Brings the open card's badges and conditions in line with the board's breaches and
 * blocked set (after a card re-read, and after the breaches are read again), touching
 * them only when their words changed.
 */
export function showConditions(): void {
  const p = panel();
  if (!current || rendered !== current.id) return;
  const fresh = [badges(current), conditions(current)];
  for (const el of fresh) {
    const old = p.querySelector(`.${el.className}`);
    // the words, the tooltips (how long) and whether it is shown at all
    if (old && old.outerHTML !== el.outerHTML) old.replaceWith(el);
  }
}

/** Updates the panel to a newer read of its card: only the parts that changed are drawn again, keeping what is typed in them. */
function update(card: Card, incoming: Card[], historyChanged: boolean): void {
  const p = panel();
  p.querySelector(".detail-version")!.textContent = ` · v${card.version}`;
  const title = p.querySelector("#detail-title")!;
  if (title.textContent !== card.title) title.textContent = card.title;
  showConditions();
  const updated = p.querySelector<HTMLElement>(".detail-updated");
  if (updated) { updated.textContent = ago(card.updated_at); updated.title = fmtTime(card.updated_at); }
  for (const part of parts(card, incoming)) {
    const old = p.querySelector<HTMLElement>(`.detail-body > [data-part="${part.key}"]`);
    if (!old || old.dataset.sig === part.sig) continue;
    // an entry being edited, or a picker stepped to a value not yet confirmed, is not
    // drawn away: the part follows once the edit is saved or cancelled (detail-stale)
    // (nor a picker whose list is open, nor a question "... for good?" awaiting its answer)
    // (nor a refusal shown in one of its forms, until the person acts on it)
    if (old.querySelector(".inline-edit, select[data-pending], select[data-open], button.danger, form .form-error:not(:empty), form .field-error:not(:empty)")) continue;
    const drafts = saveDrafts(old);
    const fresh = drawPart(part);
    old.replaceWith(fresh);
    markAllClean(fresh);
    restoreDrafts(fresh, drafts);
  }
  const comments = p.querySelector<HTMLElement>(".detail-section.comments");
  if (comments) updateComments(comments, card);
  const hist = p.querySelector<HTMLElement>(".detail-section.history");
  if (hist && historyChanged) drawHistory(hist);
}

/**
 * DELETE with the version the panel shows. A card changed meanwhile is not deleted at
 * once: the button asks again, naming the change, and deletes the version it now knows
 * (`again`). Closes the panel once deleted.
 */
async function deleteCard(card: Card, again?: number): Promise<void | { ask: string; version: number }> {
  try {
    // "delete anyway" is consent to delete the card as it is now: no version guard then (an
    // agent writing on would otherwise refuse every answer)
    await api("DELETE", again === undefined ? `${cardPath(card.id)}?version=${card.version}` : cardPath(card.id));
  } catch (e) {
    const body = toast.toBody(e);
    if (body.error !== "version_conflict" || !body.card) throw e;
    const { who } = await conflictMessage(body.card);
    return { ask: `${who || "Someone"} changed it meanwhile: delete anyway?`, version: body.card.version };
  }
  toast.info(`Deleted ${shortId(card.id)} “${card.title}”`);
  // off the board first, so closing hands the focus to a card that stays (a failed re-read
  // changes nothing of the delete: the live feed takes the card off then)
  try { renderLanes(await refreshCards([card.id])); } catch { /* see above */ }
  if (state.openCard === card.id) closeDetail();
}

/** Replaces the panel body with a form for title, tags and every field; saves a PATCH of the changes. */
function startEdit(card: Card, body: HTMLElement): void {
  editing = true;
  rendered = ""; // the body becomes the form: Save or Cancel draws the card anew
  let baseVersion = card.version;
  /** what a Save is judged against: the card the edit began on, then the one a conflict showed */
  let base = card;
  let attempt = 0;
  const title = h("input", { id: "edit-title", type: "text", value: card.title, required: true });
  const tags = tagControl("edit-tags", card.tags);
  const tagsAtStart = JSON.stringify(tags.read() ?? []);
  const inputs = (cardType(card.type_id)?.fields ?? []).map((d) => fieldRow(d, card.fields[d.id])).filter((x): x is FieldInput => x !== null);
  const save = h("button", { type: "submit", class: "primary" }, "Save");
  const form = h("form", { class: "card-form edit-form" },
    h("div", { class: "form-field", "data-field": "title" }, fieldLabel("edit-title", title, "Title", true), title, h("div", { class: "field-error", role: "alert" })),
    h("div", { class: "form-field", "data-field": "tags" }, fieldLabel("edit-tags", tags.el, "Tags"), tags.el, h("div", { class: "field-error", role: "alert" })),
    ...inputs.map((i) => i.el),
    h("div", { class: "form-error", role: "alert", tabindex: "-1" }),
    h("footer", { class: "dialog-actions" },
      h("button", { type: "button", onclick: () => { editing = false; void openDetail(card.id, false).then(focusEdit); } }, "Cancel"), save));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // a message from an earlier Save no longer applies to this one
    clearErrors(form);
    const mine = ++attempt;
    if (!(await readyToSend(form, inputs, save))) return;
    save.disabled = false;
    const changes: Record<string, unknown> = {};
    if (title.value !== card.title) changes.title = title.value;
    const newTags = tags.read() ?? [];
    if (JSON.stringify(newTags) !== tagsAtStart) changes.tags = newTags;
    const fields = changedFields(inputs);
    if (Object.keys(fields).length) changes.fields = fields;
    if (!Object.keys(changes).length) { editing = false; void openDetail(card.id, false).then(focusEdit); return; }
    save.disabled = true;
    try {
      // the version the edit started from (or the one a conflict showed): a change meanwhile
      // to the keys this Save sets is a conflict; one to other keys is saved over (patchKeys)
      await patch({ ...base, version: baseVersion }, changes, { overNewer: true });
      editing = false;
      toast.info("Saved");
      void openDetail(card.id, false).then(focusEdit);
    } catch (e) {
      const body = toast.toBody(e);
      if (body.error === "version_conflict" && body.card) {
        // keep what the user typed (its changes are still taken against the card they
        // edited, so nothing they left alone is reverted); the next Save applies them over
        // the version the server now has
        baseVersion = body.card.version;
        base = body.card; // seen now: the next Save goes over it, and over later writes to other keys
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

/**
 * A card naming a user registered since the page read the users (its owner, a user
 * field) makes it read them again, so the pickers (and the next edit form) offer them.
 */
function learnUsers(card: Card): void {
  const known = new Set(state.info.workspace.users.map((u) => u.id));
  const named = [card.owner, ...(cardType(card.type_id)?.fields ?? []).filter((f) => f.type === "user").flatMap((f) => {
    const v = card.fields[f.id];
    return Array.isArray(v) ? v : [v];
  })].filter((u): u is string => typeof u === "string" && u !== "");
  if (!named.every((u) => known.has(u))) readUsersAgain();
}

// the owner picker (its part's signature counts the users) is drawn anew
onUsersChanged(() => refreshDetail());

/** After the edit form: the focus goes back to its Edit button. */
function focusEdit(): void {
  $("#detail-edit")?.focus();
}
