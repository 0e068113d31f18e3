/**
 * The board: one lane per board column in order, cards sorted by lane_sort, lane counts
 * against WIP limits. Card elements are cached by id and version so a live update or a
 * move re-renders only the lanes it touches.
 */
import { breachSig } from "./breaches.ts";
import { h, $ } from "./dom.ts";
import { cardFace } from "./cardface.ts";
import { laneComparator } from "./sort.ts";
import { columnName, laneCount, state } from "./state.ts";
import type { Card } from "./types.ts";

const cache = new Map<string, { sig: string; el: HTMLElement }>();
/** the card that holds the roving tabindex (keyboard focus target) */
let focusId = "";

export function boardRoot(): HTMLElement {
  return $("#board")!;
}

export function clearCardCache(): void {
  cache.clear();
}

export function setFocusCard(id: string): void {
  focusId = id;
}

export function cardsIn(status: string): Card[] {
  const out: Card[] = [];
  for (const c of state.cards.values()) if (c.status === status) out.push(c);
  return out.sort(laneComparator(state.board.presentation?.lane_sort));
}

function element(card: Card): HTMLElement {
  const blocked = state.blocked.has(card.id);
  const sig = `${card.version}|${blocked}|${card.status}|${breachSig(card.id)}`;
  const hit = cache.get(card.id);
  if (hit && hit.sig === sig) return hit.el;
  const el = cardFace(card, blocked);
  cache.set(card.id, { sig, el });
  return el;
}

/** Builds every lane from scratch (board switch, reload). */
export function renderBoard(): void {
  const root = boardRoot();
  root.replaceChildren(...state.board.columns.map((col) =>
    h("section", { class: "lane", "data-lane": col, "aria-label": columnName(col) },
      h("header", { class: "lane-head" },
        h("h2", {}, columnName(col)),
        h("span", { class: "drained-badge", hidden: true, title: "This watched lane is empty (alert_when_empty)" }, "empty"),
        h("span", { class: "lane-count", "aria-live": "polite" })),
      h("div", { class: "lane-cards", role: "list" }))));
  renderLanes(state.board.columns);
  root.setAttribute("aria-busy", "false");
}

/** Re-renders the given lanes (cards, counts, limits), keeping keyboard focus where it was. */
export function renderLanes(statuses: Iterable<string>): void {
  const root = boardRoot();
  const active = document.activeElement as HTMLElement | null;
  const hadFocus = active?.classList.contains("card") && root.contains(active) ? active.dataset.id : undefined;
  for (const status of new Set(statuses)) {
    const lane = root.querySelector<HTMLElement>(`.lane[data-lane="${CSS.escape(status)}"]`);
    if (!lane) continue;
    const cards = cardsIn(status);
    const els = cards.map(element);
    const list = lane.querySelector<HTMLElement>(".lane-cards")!;
    list.replaceChildren(...(els.length ? els : [h("p", { class: "lane-empty" }, state.filter || state.q ? "No matching cards" : "No cards")]));
    const limit = state.board.wip_limits?.[status];
    const count = laneCount(status, cards.length);
    const over = limit !== undefined && count > limit;
    lane.classList.toggle("over-limit", over);
    lane.classList.toggle("at-limit", limit !== undefined && count === limit);
    lane.classList.toggle("drained", state.drained.has(status));
    lane.querySelector<HTMLElement>(".drained-badge")!.hidden = !state.drained.has(status);
    const narrowed = (state.filter || state.q) && count !== cards.length;
    const more = state.truncated.has(status) ? "+" : "";
    lane.querySelector(".lane-count")!.textContent =
      `${narrowed ? `${cards.length} of ` : ""}${count}${more}${limit !== undefined ? ` / ${limit}` : ""}`;
    lane.querySelector<HTMLElement>(".lane-count")!.title = limit !== undefined
      ? `${count} cards, WIP limit ${limit}${over ? " (over the limit)" : ""}` : `${count} cards`;
  }
  for (const [id] of cache) if (!state.cards.has(id)) cache.delete(id);
  updateRoving();
  if (hadFocus) root.querySelector<HTMLElement>(`.card[data-id="${CSS.escape(hadFocus)}"]`)?.focus({ preventScroll: true });
}

/** Exactly one card is tabbable: the remembered one, else the first on the board. */
export function updateRoving(): void {
  const root = boardRoot();
  const cards = root.querySelectorAll<HTMLElement>(".card");
  let target = focusId ? root.querySelector<HTMLElement>(`.card[data-id="${CSS.escape(focusId)}"]`) : null;
  if (!target) target = cards[0] ?? null;
  for (const c of cards) c.tabIndex = c === target ? 0 : -1;
}

export function cardElement(id: string): HTMLElement | null {
  return boardRoot().querySelector<HTMLElement>(`.card[data-id="${CSS.escape(id)}"]`);
}
