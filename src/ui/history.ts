/**
 * The history timeline of the card detail. It opens with the latest 500 entries (what
 * GET /cards/{id}/history gives without `since`) and says when older ones exist; "Load
 * older entries" reads them 500 at a time. The history route pages only forward (`since`
 * an event id), so the card's event ids come from GET /cards/{id}/events first; from then
 * on live refreshes read only the entries after the last one shown.
 */
import { cardEvents, history, HISTORY_PAGE } from "./api.ts";
import { section } from "./detail-parts.ts";
import { ago, fmtTime, h, syncChildren } from "./dom.ts";
import * as toast from "./toast.ts";
import type { HistoryItem } from "./types.ts";

interface Shown {
  cardId: string;
  /** the entries shown, oldest first */
  items: HistoryItem[];
  /** every event id of the card, oldest first: read once older entries were asked for */
  ids: string[] | null;
  /** the index in `ids` of the first entry shown */
  first: number;
  /** whether the card has entries older than the first shown */
  older: boolean;
}

let shown: Shown = { cardId: "", items: [], ids: null, first: 0, older: false };

/** Starts the timeline of a card with its latest entries. */
export function setHistory(cardId: string, items: HistoryItem[]): void {
  shown = { cardId, items, ids: null, first: 0, older: items.length >= HISTORY_PAGE };
}

const same = (a: HistoryItem | undefined, b: HistoryItem | undefined): boolean =>
  a?.at === b?.at && a?.type === b?.type && a?.summary === b?.summary;

/** Reads what is new in the card's history; resolves true when the timeline changed. */
export async function refreshHistory(cardId: string): Promise<boolean> {
  if (shown.cardId !== cardId || !shown.ids) {
    const { items } = await history(cardId);
    const old = shown.cardId === cardId ? shown.items : [];
    if (items.length === old.length && same(items[0], old[0]) && same(items.at(-1), old.at(-1))) return false;
    setHistory(cardId, items);
    return true;
  }
  // older entries are shown: add the ones after the last event shown
  const since = shown.ids.at(-1) ?? "0";
  const [events, entries] = await Promise.all([cardEvents(cardId, since), history(cardId, since)]);
  const n = Math.min(events.items.length, entries.items.length); // an event that landed between the reads waits for the next
  if (shown.cardId !== cardId || !shown.ids || shown.ids.at(-1) !== since || n === 0) return false;
  shown.ids.push(...events.items.slice(0, n).map((e) => e.id));
  shown.items.push(...entries.items.slice(0, n));
  return true;
}

/** Every event id of the card, oldest first. */
async function eventIds(cardId: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const page = await cardEvents(cardId, ids.at(-1) ?? "0");
    ids.push(...page.items.map((e) => e.id));
    if (page.items.length < HISTORY_PAGE) return ids;
  }
}

/** The entries of the events ids[from] up to (not including) ids[to]. */
async function entriesBetween(cardId: string, ids: string[], from: number, to: number): Promise<HistoryItem[]> {
  if (to <= from) return [];
  return (await history(cardId, from > 0 ? ids[from - 1] : "0", to - from)).items;
}

/** Adds the 500 entries before the first one shown. */
async function loadOlder(cardId: string): Promise<void> {
  let ids = shown.ids;
  let first = shown.first;
  let items = shown.items;
  if (!ids) {
    // the latest page is read again by id, so that entries and ids line up
    ids = await eventIds(cardId);
    first = Math.max(0, ids.length - HISTORY_PAGE);
    items = await entriesBetween(cardId, ids, first, ids.length);
  }
  const from = Math.max(0, first - HISTORY_PAGE);
  const older = await entriesBetween(cardId, ids, from, first);
  if (shown.cardId !== cardId) return;
  shown = { cardId, ids, items: [...older, ...items], first: from, older: from > 0 };
}

export function historySection(): HTMLElement {
  const sec = section("History", "history", h("ol", { class: "timeline" }), h("p", { class: "history-more muted", hidden: true }));
  drawHistory(sec);
  return sec;
}

/**
 * Draws the timeline (newest first), keeping the items already drawn (a live entry adds one
 * item), and, when older entries exist, says so with a button to load them.
 */
export function drawHistory(sec: HTMLElement): void {
  const timeline = sec.querySelector(".timeline")!;
  const drawn = new Map<string, HTMLElement>();
  for (const li of timeline.querySelectorAll<HTMLElement>(":scope > li")) drawn.set(li.dataset.key!, li);
  syncChildren(timeline, [...shown.items].reverse().map((e) => {
    const key = `${e.at}|${e.actor}|${e.type}|${e.summary}`;
    const li = drawn.get(key);
    drawn.delete(key); // an item is drawn once, even when two entries read alike
    return li ?? h("li", { "data-type": e.type, "data-key": key },
      h("time", { datetime: e.at, title: fmtTime(e.at) }, ago(e.at)), " ",
      h("strong", {}, e.actor), " ", e.summary);
  }));
  const more = sec.querySelector<HTMLElement>(".history-more")!;
  more.hidden = !shown.older;
  if (!shown.older) return;
  const n = shown.items.length.toLocaleString("en-US");
  const of = shown.ids ? ` of ${shown.ids.length.toLocaleString("en-US")}` : "";
  const cardId = shown.cardId;
  const button = h("button", { type: "button", class: "link-button history-older" }, "Load older entries");
  button.addEventListener("click", () => {
    button.disabled = true;
    loadOlder(cardId).then(() => drawHistory(sec), (e) => { button.disabled = false; toast.error(e, "Could not load older history"); });
  });
  more.replaceChildren(`Showing the latest ${n}${of} entries${shown.ids ? "" : "; any older ones are not shown"}. `, button);
}
