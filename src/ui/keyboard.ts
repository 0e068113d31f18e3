/**
 * Keyboard use: arrows move between cards (up/down) and lanes (left/right), Home/End jump
 * within a lane, Enter or Space opens a card, Escape closes it, Shift+Left/Right moves the
 * focused card to the neighbouring lane. "/" focuses search, "n" opens the new-card form,
 * "?" lists the keys: from the board or the page, never from a focused control.
 */
import { focusSearch } from "./barmenu.ts";
import { boardRoot, setFocusCard, updateRoving } from "./board.ts";
import { h } from "./dom.ts";
import { isDirty } from "./dirty.ts";

export interface KeyActions {
  open(id: string): void;
  close(): boolean;
  /** an edit form is open or a form holds typed input: Esc must not close it */
  editing(): boolean;
  move(id: string, to: string): void;
  create(): void;
}

const HELP: [string, string][] = [
  ["← → ↑ ↓", "move between lanes and cards"], ["Home / End", "first / last card of the lane"],
  ["Enter", "open the card"], ["Esc", "close the card or dialog (not while it holds typed input), or an open list of the top bar"], ["Shift + ← →", "move the card to the next lane"],
  ["/", "search"], ["n", "new card"], ["?", "this help"],
];

function lanes(): HTMLElement[] {
  return [...boardRoot().querySelectorAll<HTMLElement>(".lane")];
}

function cardsOf(lane: Element): HTMLElement[] {
  return [...lane.querySelectorAll<HTMLElement>(".card")];
}

function focusCard(el: HTMLElement | undefined): void {
  if (!el) return;
  setFocusCard(el.dataset.id!);
  updateRoving();
  el.focus();
  el.scrollIntoView({ block: "nearest", inline: "nearest" });
}

/**
 * Single-key shortcuts (/, n, ?) act only with the focus on the board (a card, a lane) or on
 * nothing: a letter typed on a focused control (a chip, a button, a field) is meant for it,
 * or is a speech-input user's word, not a command (WCAG 2.1.4).
 */
function fromBoard(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !el || el === document.body || el === document.documentElement || el.matches?.(".card, .lane-cards, #board") === true;
}

export function installKeyboard(actions: KeyActions): void {
  document.addEventListener("keydown", (ev) => {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const card = (ev.target as HTMLElement).closest?.<HTMLElement>(".lane .card");
    if (card) {
      const ls = lanes();
      const lane = card.closest(".lane")!;
      const li = ls.indexOf(lane as HTMLElement);
      const list = cardsOf(lane);
      const i = list.indexOf(card);
      const side = (dir: number) => {
        for (let j = li + dir; j >= 0 && j < ls.length; j += dir) {
          const other = cardsOf(ls[j]!);
          if (other.length) return other[Math.min(i, other.length - 1)];
        }
        return undefined;
      };
      let handled = true;
      if (ev.shiftKey && (ev.key === "ArrowLeft" || ev.key === "ArrowRight")) {
        const target = ls[li + (ev.key === "ArrowLeft" ? -1 : 1)];
        if (target) actions.move(card.dataset.id!, target.dataset.lane!);
      } else if (ev.key === "ArrowDown") focusCard(list[i + 1]);
      else if (ev.key === "ArrowUp") focusCard(list[i - 1]);
      else if (ev.key === "ArrowRight") focusCard(side(1));
      else if (ev.key === "ArrowLeft") focusCard(side(-1));
      else if (ev.key === "Home") focusCard(list[0]);
      else if (ev.key === "End") focusCard(list[list.length - 1]);
      else if (ev.key === "Enter" || ev.key === " ") actions.open(card.dataset.id!);
      else handled = false;
      if (handled) { ev.preventDefault(); return; }
    }
    // an empty lane holds the focus when its last card left: the arrows lead on from it
    const emptyLane = (ev.target as HTMLElement).classList?.contains("lane-cards") ? (ev.target as HTMLElement).closest<HTMLElement>(".lane") : null;
    if (emptyLane && !ev.shiftKey && /^Arrow(Left|Right|Down)$/.test(ev.key)) {
      const ls = lanes();
      const dir = ev.key === "ArrowLeft" ? -1 : 1;
      let next = ev.key === "ArrowDown" ? cardsOf(emptyLane)[0] : undefined;
      for (let j = ls.indexOf(emptyLane) + dir; !next && ev.key !== "ArrowDown" && j >= 0 && j < ls.length; j += dir) next = cardsOf(ls[j]!)[0];
      focusCard(next);
      ev.preventDefault();
      return;
    }
    if (document.querySelector("dialog[open]")) return; // a modal handles its own keys
    if (ev.key === "Escape") {
      // an edit in progress is left with Cancel, Save or ×: Esc never throws typed changes away
      if (actions.editing()) {
        // an entry or comment edit with nothing changed in it is closed, as its Cancel would
        const inline = (document.activeElement as HTMLElement | null)?.closest<HTMLFormElement>("#detail .inline-edit")
          ?? document.querySelector<HTMLFormElement>("#detail .inline-edit");
        if (inline && !isDirty(inline)) {
          [...inline.querySelectorAll<HTMLButtonElement>("button[type=button]")].find((b) => b.textContent === "Cancel")?.click();
          ev.preventDefault();
          return;
        }
        // focus stays in the panel (on its title), so Tab goes on from there, not from the page's top
        const active = document.activeElement as HTMLElement | null;
        const title = document.querySelector<HTMLElement>("#detail-title");
        if (active && title && active.closest("#detail")) title.focus();
        else active?.blur();
        ev.preventDefault();
        return;
      }
      if (actions.close()) ev.preventDefault();
      return;
    }
    if (!fromBoard(ev.target)) return;
    if (ev.key === "/") { ev.preventDefault(); focusSearch(); }
    else if (ev.key === "n") { ev.preventDefault(); actions.create(); }
    else if (ev.key === "?") { ev.preventDefault(); showHelp(); }
  });
}

function showHelp(): void {
  const dlg = h("dialog", { class: "dialog help-dialog", "aria-label": "Keyboard shortcuts" },
    h("header", { class: "dialog-head" }, h("h2", {}, "Keyboard"),
      h("button", { type: "button", class: "icon-button", "aria-label": "Close", onclick: () => dlg.close() }, "×")),
    h("dl", { class: "keys" }, HELP.map(([k, d]) => [h("dt", {}, h("kbd", {}, k)), h("dd", {}, d)])));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
}
