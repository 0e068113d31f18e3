/**
 * The top bar's board signals: the breach count ("⚠ 3") and the hidden-card note ("2
 * hidden by the board's filter"). Each is a button that shows its words in a small panel
 * (disclosure.ts), so keyboard and touch users get what a tooltip gave mouse users: the
 * board's conditions one by one (a card's opens the card), and the board's default filter.
 * Neither is a live region: they follow every agent write. An open list is drawn again when
 * the breaches are read again (after stream events), keeping the focus where it is.
 */
import { breachSummary, describeBreach } from "./breaches.ts";
import { disclosure, type Disclosure } from "./disclosure.ts";
import { h, $, shortId } from "./dom.ts";
import { filterWords } from "./filterwords.ts";
import { state } from "./state.ts";
import type { Breach } from "./types.ts";

let breachList: Disclosure | undefined;
let filterNote: Disclosure | undefined;

/** The two signal buttons, each followed by its panel, for the top bar; `openCard` opens a card in the detail panel. */
export function signalControls(openCard: (id: string) => void): HTMLElement[] {
  const count = h("button", { type: "button", id: "breach-count", class: "breach-count", hidden: true });
  const list = h("div", { id: "breach-list", class: "breach-list", role: "group", "aria-label": "Conditions on this board" });
  breachList = disclosure(count, list, () => drawBreaches(list, (id) => { breachList?.set(false); openCard(id); }));
  // a narrow window shows "2 hidden"; the rest is still read out (styles.css)
  const note = h("button", { type: "button", id: "hidden-note", class: "hidden-note", hidden: true },
    h("span", { class: "note-count" }), h("span", { class: "note-more" }, " by the board's filter"));
  const filter = h("div", { id: "hidden-filter", class: "hidden-filter", role: "group", "aria-label": "The board's default filter" });
  filterNote = disclosure(note, filter, () => drawFilter(filter));
  return [note, filter, count, list];
}

/** The breach count and the hidden-card note, from state.breaches and state.hidden; an open panel follows. */
export function showSignals(): void {
  const count = $("#breach-count");
  if (count) {
    const { count: n, text } = breachSummary();
    // an open list stays, saying there are none now, and a focused button stays: neither
    // vanishes under the focus
    count.hidden = n === 0 && !breachList?.isOpen() && document.activeElement !== count;
    setText(count, `⚠ ${n}`);
    const title = `${n} condition${n === 1 ? "" : "s"} on this board${text ? `: ${text}` : ""}`;
    if (count.title !== title) { count.title = title; count.setAttribute("aria-label", title); }
    breachList?.redraw();
  }
  const note = $("#hidden-note");
  if (note) {
    const { count: n, more } = state.hidden;
    note.hidden = n === 0 && !filterNote?.isOpen() && document.activeElement !== note;
    setText(note.querySelector(".note-count")!, `${n}${more ? "+" : ""} hidden`);
    filterNote?.redraw();
  }
}

/** The kind of a condition in a word, before its description. */
const KIND: Record<Breach["kind"], string> = {
  status_timeout: "Stuck", card_idle: "Idle", card_blocked: "Blocked", wip_exceeded: "Over the WIP limit", lane_limit: "Empty lane",
};

/** A breach's words: "Stuck: “Fix login” — Review: 5h 20m in this status (limit 4h)". */
function breachWords(b: Breach): string {
  if (!b.card_id) return `${KIND[b.kind]}: ${describeBreach(b)}`;
  const title = state.cards.get(b.card_id)?.title;
  const card = title ? `“${title}”` : `card ${shortId(b.card_id)}`;
  return b.kind === "card_blocked" ? `${KIND[b.kind]}: ${card}` : `${KIND[b.kind]}: ${card} — ${describeBreach(b)}`;
}

/**
 * The list of conditions, updated in place: an item that stays keeps its element (and the
 * focus, when it has it); the focus on an item that went moves to its neighbour, else to
 * the list's button.
 */
function drawBreaches(list: HTMLElement, open: (id: string) => void): void {
  const n = state.breaches.length;
  const head = list.querySelector(".popover-title") ?? list.appendChild(h("p", { class: "popover-title" }));
  setText(head, n ? `${n} condition${n === 1 ? "" : "s"} on this board` : "No conditions hold on this board now.");
  const ul = list.querySelector("ul") ?? list.appendChild(h("ul", { class: "condition-list" }));
  const old = new Map([...ul.children].map((li) => [(li as HTMLElement).dataset.key!, li as HTMLElement]));
  const active = document.activeElement;
  const focusAt = active && ul.contains(active) ? [...ul.children].findIndex((li) => li.contains(active)) : -1;
  const items = state.breaches.map((b) => {
    const key = `${b.kind}|${b.card_id ?? b.column ?? ""}`;
    const words = breachWords(b);
    let li = old.get(key);
    if (!li) {
      li = h("li", { "data-key": key }, b.card_id
        ? h("button", { type: "button", class: "link-button condition-card", "data-card": b.card_id, onclick: () => open(b.card_id!) })
        : h("span", {}));
    }
    setText(li.firstElementChild!, words);
    return li;
  });
  const unique = [...new Map(items.map((li) => [li.dataset.key, li])).values()];
  for (const li of old.values()) if (!unique.includes(li)) li.remove();
  unique.forEach((li, i) => { if (ul.children[i] !== li) ul.insertBefore(li, ul.children[i] ?? null); });
  if (focusAt >= 0 && !ul.contains(active)) {
    const next = ul.children[Math.min(focusAt, ul.children.length - 1)]?.querySelector("button");
    (next ?? $("#breach-count"))?.focus({ preventScroll: true });
  }
}

/** The board's default filter, in words and as JSON. */
function drawFilter(panel: HTMLElement): void {
  const filter = state.board.default_filter ?? {};
  const { count: n, more } = state.hidden;
  const json = JSON.stringify(filter);
  // the filter changes only with the definitions (which rebuild the top bar): the count may
  if (panel.dataset.filter !== json) {
    panel.dataset.filter = json;
    panel.replaceChildren(
      h("p", { class: "popover-title" }),
      h("p", {}, "The board shows only the cards where:"),
      h("ul", { class: "condition-list" }, filterWords(filter).map((line) => h("li", {}, line))),
      h("p", { class: "muted" }, "As JSON: ", h("code", {}, json)));
  }
  setText(panel.querySelector(".popover-title")!, `${n}${more ? "+" : ""} card${n === 1 && !more ? "" : "s"} of this board's types in its lanes left out`);
}

/** Writes only a change: an unchanged text is not written again. */
function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}
