/**
 * The board: one lane per board column in order, cards sorted by lane_sort, lane counts
 * against WIP limits, and a footer when a lane holds more than it shows. Card elements are
 * cached by id and version, and a lane is updated in place (only the cards that changed,
 * moved, came or left are touched), so a live update costs what it changed.
 */
import { announce } from "./announce.ts";
import { breachSig } from "./breaches.ts";
import { canLoadMore, laneCards, laneSort } from "./data.ts";
import { h, $, syncChildren } from "./dom.ts";
import { cardFace } from "./cardface.ts";
import { describeSort } from "./sort.ts";
import { columnName, laneCount, matchingCount, narrowed, state } from "./state.ts";
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


const fmt = (n: number): string => n.toLocaleString("en-US");

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
        // not live: agents change the counts all the time; moves are announced in words instead
        h("span", { class: "lane-count" })),
      // beside the list, not in it: a list holds only list items, and an empty lane is an
      // empty list (not "list, 1 item") that this note describes
      h("p", { class: "lane-empty", id: `lane-empty-${col}`, hidden: true }),
      // a scrolling list is a tab stop of its own in Chrome; the cards are reached with the
      // arrow keys from the board's one roving card instead
      h("div", { class: "lane-cards", role: "list", "aria-label": `Cards in ${columnName(col)}`, tabindex: "-1" }),
      h("footer", { class: "lane-foot", hidden: true },
        h("span", { class: "lane-shown" }),
        h("button", { type: "button", class: "link-button lane-more", "data-more": col }, "Show more")))));
  renderLanes(state.board.columns);
  root.setAttribute("aria-busy", "false");
}

/** Re-renders the given lanes (cards, counts, limits, footers), keeping keyboard focus where it was. */
export function renderLanes(statuses: Iterable<string>): void {
  const root = boardRoot();
  const active = document.activeElement as HTMLElement | null;
  const hadFocus = active?.classList.contains("card") && root.contains(active) ? active.dataset.id : undefined;
  // where the focused card sat: when it leaves the board (an agent deleted or moved it off),
  // the focus goes to its neighbour there instead of falling to the page
  const focusLane = hadFocus ? active!.closest<HTMLElement>(".lane") : null;
  const focusAt = focusLane ? [...focusLane.querySelectorAll(".card")].indexOf(active!) : -1;
  const focusTitle = hadFocus ? state.cards.get(hadFocus)?.title ?? active!.querySelector(".card-title")?.textContent ?? "" : "";
  for (const status of new Set(statuses)) {
    const lane = root.querySelector<HTMLElement>(`.lane[data-lane="${CSS.escape(status)}"]`);
    if (!lane) continue;
    const cards = laneCards(status);
    const list = lane.querySelector<HTMLElement>(".lane-cards")!;
    syncChildren(list, cards.map(element));
    drawEmpty(lane, list, cards.length === 0);
    drawCount(lane, status, cards.length);
    drawFoot(lane, status, cards.length);
  }
  for (const [id] of cache) if (!state.cards.has(id)) cache.delete(id);
  updateRoving();
  if (!hadFocus) return;
  const again = cardElement(hadFocus);
  if (again) { if (document.activeElement !== again) again.focus({ preventScroll: true }); return; }
  if (focusLane) focusNeighbour(focusLane, focusAt, focusTitle);
}

/** "No cards" shown in an empty lane, and said with its list when the empty lane has the focus. */
function drawEmpty(lane: HTMLElement, list: HTMLElement, empty: boolean): void {
  const note = lane.querySelector<HTMLElement>(".lane-empty")!;
  note.hidden = !empty;
  if (empty) setText(note, narrowed() ? "No matching cards" : "No cards");
  // a description names even a hidden note: only an empty lane has one
  if (empty && list.getAttribute("aria-describedby") !== note.id) list.setAttribute("aria-describedby", note.id);
  else if (!empty && list.hasAttribute("aria-describedby")) list.removeAttribute("aria-describedby");
}

/** The focused card left the board: its lane's card now at its place (or the one before) takes the focus, else the lane. */
function focusNeighbour(lane: HTMLElement, at: number, title: string): void {
  const cards = [...lane.querySelectorAll<HTMLElement>(".card")];
  const next = cards[Math.min(at, cards.length - 1)];
  const gone = title ? `“${title}” is no longer on the board.` : "The card is no longer on the board.";
  if (next) {
    focusId = next.dataset.id!;
    updateRoving();
    next.focus({ preventScroll: true });
    announce(`${gone} Focus on “${state.cards.get(focusId)?.title ?? ""}”.`);
  } else {
    lane.querySelector<HTMLElement>(".lane-cards")?.focus({ preventScroll: true });
    announce(`${gone} ${columnName(lane.dataset.lane!)} has no cards now.`);
  }
}

/** The lane's count against its WIP limit: "12 / 10", or "3 of 12 / 10" while the view is narrowed. */
function drawCount(lane: HTMLElement, status: string, shown: number): void {
  const limit = state.board.wip_limits?.[status];
  const matching = matchingCount(status, shown);
  const count = laneCount(status, shown);
  const over = limit !== undefined && count > limit;
  lane.classList.toggle("over-limit", over);
  lane.classList.toggle("at-limit", limit !== undefined && count === limit);
  lane.classList.toggle("drained", state.drained.has(status));
  lane.querySelector<HTMLElement>(".drained-badge")!.hidden = !state.drained.has(status);
  const label = lane.querySelector<HTMLElement>(".lane-count")!;
  const part = narrowed() && matching !== count ? `${fmt(matching)} of ` : "";
  setText(label, `${part}${fmt(count)}${limit !== undefined ? ` / ${limit}` : ""}`);
  const title = countWords(status, shown);
  if (label.title !== title) label.title = title;
}

/** The lane's count in words: "4 cards, WIP limit 3 (over the limit)". */
export function countWords(status: string, shown = laneCards(status).length): string {
  const limit = state.board.wip_limits?.[status];
  const count = laneCount(status, shown);
  return limit !== undefined ? `${fmt(count)} cards, WIP limit ${limit}${count > limit ? " (over the limit)" : ""}` : `${fmt(count)} cards`;
}

/** "Showing 100 of 3,427" under a lane that holds more than it shows, with the way to the rest. */
function drawFoot(lane: HTMLElement, status: string, shown: number): void {
  const foot = lane.querySelector<HTMLElement>(".lane-foot")!;
  const total = state.counts?.[status];
  const more = total !== undefined ? total > shown : state.lanes[status]?.edge != null;
  foot.hidden = !more;
  if (!more) return;
  const page = canLoadMore(status);
  setText(foot.querySelector(".lane-shown")!, total !== undefined
    ? `Showing ${fmt(shown)} of ${fmt(total)}${page ? "" : `, the first ${fmt(shown)} ${describeSort(laneSort()!)}: search or pick a filter to find the others`}`
    : `Showing the first ${fmt(shown)}`);
  foot.querySelector<HTMLElement>(".lane-more")!.hidden = !page;
}

function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Exactly one card is tabbable: the remembered one, else the first on the board. */
export function updateRoving(): void {
  const root = boardRoot();
  const cards = root.querySelectorAll<HTMLElement>(".card");
  let target = focusId ? root.querySelector<HTMLElement>(`.card[data-id="${CSS.escape(focusId)}"]`) : null;
  if (!target) target = cards[0] ?? null;
  for (const c of cards) {
    const want = c === target ? 0 : -1;
    if (c.tabIndex !== want) c.tabIndex = want;
  }
}

export function cardElement(id: string): HTMLElement | null {
  return boardRoot().querySelector<HTMLElement>(`.card[data-id="${CSS.escape(id)}"]`);
}
