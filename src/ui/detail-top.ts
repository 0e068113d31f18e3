/** The top of the card detail: its header, the status and owner pickers, and its fields. */
import { claim, patch, release } from "./actions.ts";
import { breachBadges, describeBreach } from "./breaches.ts";
import { artifactUpload, busy, DOUBLE_CLICK_MS, section, setBusy } from "./detail-parts.ts";
import { ago, fmtTime, h, shortId } from "./dom.ts";
import { onPicked } from "./picker.ts";
import { isEmpty, label, renderValue } from "./fields.ts";
import { icon } from "./icons.ts";
import { allowedColumns, allowedTargets, cardType, columnName, state } from "./state.ts";
import * as toast from "./toast.ts";
import type { Card } from "./types.ts";

/** The kicker's badges: blocked, stuck, idle. */
export function badges(card: Card): HTMLElement {
  return h("span", { class: "detail-badges" }, state.blocked.has(card.id) ? h("span", { class: "blocked-badge" }, "blocked") : null, breachBadges(card.id));
}

/**
 * The card's conditions in words: how long it has been stuck or idle, and the limit. The
 * badges say it only in a tooltip, which keyboard and touch users never see. Empty (and
 * hidden) when none holds.
 */
export function conditions(card: Card): HTMLElement {
  const lines = [
    state.blocked.has(card.id) ? "Blocked — waits on an unfinished dependency" : "",
    ...(state.cardBreaches.get(card.id) ?? []).map((b) => `${b.kind === "status_timeout" ? "Stuck" : "Idle"} — ${describeBreach(b)}`),
  ].filter(Boolean);
  return h("ul", { class: "detail-conditions", "aria-label": "Conditions", hidden: !lines.length }, lines.map((t) => h("li", {}, t)));
}

/** The header: type, short id, version, badges, title and the close button. */
export function head(card: Card, close: HTMLElement): HTMLElement {
  const type = cardType(card.type_id);
  return h("header", { class: "detail-head" },
    h("div", { class: "detail-kicker" }, icon(type?.icon), " ", type?.name ?? card.type_id, " · ",
      h("button", { type: "button", class: "link-button mono copy-id", title: `Copy ${card.id}`, "aria-label": `Copy the card id ${shortId(card.id)}`,
        onclick: () => void navigator.clipboard?.writeText(card.id).then(() => toast.info(`Copied ${card.id}`)) }, shortId(card.id)),
      h("span", { class: "muted detail-version" }, ` · v${card.version}`),
      badges(card)),
    h("h2", { id: "detail-title", tabindex: "-1" }, card.title),
    close);
}

/**
 * Status and owner pickers, tags, created and updated. `latest` gives the card as the panel
 * knows it when a picker is used (the part outlives writes that leave it unchanged).
 */
export function meta(card: Card, latest: () => Card): HTMLElement {
  // the moves a drag would allow; the others stay listed but cannot be picked
  const targets = allowedTargets(card.status, card.type_id);
  const statusSel = h("select", { id: "detail-status", "aria-label": "Status" },
    allowedColumns(card.type_id).map((c) => {
      const ok = c === card.status || !targets || targets.has(c);
      return h("option", { value: c, selected: c === card.status, disabled: !ok, title: ok ? undefined : `${columnName(card.status)} cannot move to ${columnName(c)} on this board` },
        ok ? columnName(c) : `${columnName(c)} (not allowed from here)`);
    }));
  // A pick is judged against the card this part shows (the panel holds the part back while
  // a stepped value waits): a change the person has not seen to the same key is a conflict,
  // one to other keys is written over (patchKeys)
  let seen = card;
  const pick = (changes: Record<string, string>, undo: () => void, failed: string) =>
    patch(seen, changes, { overNewer: true }).then((c) => { seen = c; }, (e) => { undo(); toast.error(e, failed); });
  onPicked(statusSel, () => seen.status, (value) => pick({ status: value }, () => { statusSel.value = seen.status; }, "Status not changed"));
  const users = state.info.workspace.users.map((u) => ({ value: u.id, text: u.display_name || u.id }));
  // an owner registered after the page loaded is shown as it is, not as "Unowned"
  if (card.owner && !users.some((u) => u.value === card.owner)) users.push({ value: card.owner, text: card.owner });
  const ownerSel = h("select", { id: "detail-owner", "aria-label": "Owner" }, h("option", { value: "" }, "Unowned"),
    users.map((u) => h("option", { value: u.value, selected: u.value === card.owner }, u.text)));
  onPicked(ownerSel, () => seen.owner ?? "", (value) => pick({ owner: value }, () => { ownerSel.value = seen.owner ?? ""; }, "Owner not changed"));
  return h("dl", { class: "detail-meta" },
    h("dt", {}, h("label", { for: "detail-status" }, "Status")), h("dd", {}, statusSel,
      h("span", { class: "muted" }, ` since ${ago(card.status_since)}`)),
    h("dt", {}, h("label", { for: "detail-owner" }, "Owner")), h("dd", {}, ownerSel, ownerAction(card, latest)),
    h("dt", {}, "Tags"), h("dd", {}, card.tags.length ? h("span", { class: "tags" }, card.tags.map((t) => h("span", { class: "tag" }, t))) : h("span", { class: "muted" }, "none")),
    h("dt", {}, "Created"), h("dd", {}, `${fmtTime(card.created_at)} by ${card.created_by}`),
    h("dt", {}, "Updated"), h("dd", { class: "detail-updated", title: fmtTime(card.updated_at) }, ago(card.updated_at)));
}

/**
 * Claim (an unowned card: claim's compare-and-set, unlike picking an owner, which hands a
 * card over) or Release (the person's own card); nothing on another's card.
 */
/** when Claim or Release was last clicked: the second click of a double click lands on the button that replaced it */
let lastOwnerAction = 0;

function ownerAction(card: Card, latest: () => Card): HTMLElement | null {
  const me = state.actor || state.info.workspace.settings.default_user || "";
  // one write at a time: the button waits for the answer (a double click sent it twice),
  // and a click in the first moments of a button is the rest of the click that drew it
  // (Claim becomes Release under a double click)
  const act = (b: HTMLButtonElement, send: () => Promise<unknown>, failed: string) => {
    if (busy(b) || Date.now() - lastOwnerAction < DOUBLE_CLICK_MS) return;
    lastOwnerAction = Date.now();
    setBusy(b, true);
    void send().catch((e) => toast.error(e, failed)).finally(() => setBusy(b, false));
  };
  if (!card.owner) {
    const b = h("button", { type: "button", id: "detail-claim", class: "owner-action" }, "Claim");
    b.addEventListener("click", () => act(b, () => claim(latest(), me), "Not claimed"));
    return b;
  }
  if (card.owner === me) {
    const b = h("button", { type: "button", id: "detail-release", class: "owner-action" }, "Release");
    b.addEventListener("click", () => act(b, () => release(latest()), "Not released"));
    return b;
  }
  return null;
}

export function fieldsSection(card: Card): HTMLElement {
  const plain = (cardType(card.type_id)?.fields ?? []).filter((d) => d.type !== "repeating" && d.display !== "hidden");
  return section("Fields", "fields", h("dl", { class: "detail-fields" }, plain.map((d) => [
    h("dt", { title: d.description ?? "" }, label(d)),
    h("dd", { class: `t-${d.type}${d.display ? ` d-${d.display}` : ""}`, "data-field": d.id },
      isEmpty(card.fields[d.id]) ? h("span", { class: "muted" }, "—") : renderValue(d, card.fields[d.id], "detail"),
      d.type === "artifact" && d.artifact_policy !== "uri" ? artifactUpload(card, d) : null),
  ])));
}
