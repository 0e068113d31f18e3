/**
 * The top bar: board picker (default board first), the board's breach count and
 * hidden-card note (signals.ts), saved filter chips, search box and actor picker (behind ☰
 * in a short, narrow window: barmenu.ts), live status and the new-card button. Also applies
 * the board's theme tokens.
 */
import { barMenu, markNarrowed } from "./barmenu.ts";
import { h, $, debounce } from "./dom.ts";
import { boardOrder, state } from "./state.ts";
import type { LiveStatus } from "./live.ts";
import { onPicked } from "./picker.ts";
import { signalControls } from "./signals.ts";
import { onUsersChanged, readUsersAgain } from "./users.ts";

export interface ChromeActions {
  board(id: string): void;
  filter(name: string): void;
  search(q: string): void;
  actor(id: string): void;
  create(): void;
  /** open a card in the detail panel (from the list of the board's conditions) */
  card(id: string): void;
}

/** Board theme tokens (the server's THEME_TOKENS) and the CSS variables they set. */
const TOKENS = ["accent", "accent_text", "background", "surface", "text", "muted", "border",
  "danger", "warning", "success", "info", "radius", "font", "font_mono"];

export function applyTheme(theme: Record<string, string> | undefined): void {
  const root = document.documentElement.style;
  for (const t of TOKENS) {
    const v = theme?.[t];
    const name = `--${t.replace(/_/g, "-")}`;
    if (v && !/[;{}<>]/.test(v)) root.setProperty(name, v);
    else root.removeProperty(name);
  }
}

export function renderChrome(actions: ChromeActions): void {
  const bar = $("#topbar")!;
  const boards = h("select", { id: "board-picker", "aria-label": "Board" },
    boardOrder().map((id) => h("option", { value: id }, state.info.boards[id]!.name)));
  // the arrow keys step through the boards; Enter (or leaving the picker) switches
  onPicked(boards, () => state.board.id, async (id) => actions.board(id));
  const search = h("input", { id: "search", type: "search", placeholder: "Search  /", "aria-label": "Search cards", autocomplete: "off" });
  search.addEventListener("input", debounce(() => { actions.search(search.value.trim()); markNarrowed(); }, 250));
  search.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && search.value) { search.value = ""; actions.search(""); markNarrowed(); ev.stopPropagation(); } });
  const actor = h("select", { id: "actor", "aria-label": "Acting as" }, actorOptions());
  onPicked(actor, () => state.actor, async (id) => actions.actor(id));
  // a user registered since the page read them (cards users add) is offered when the person opens the picker
  actor.addEventListener("focus", readUsersAgain);
  actor.addEventListener("pointerdown", readUsersAgain);
  bar.replaceChildren(
    h("h1", { class: "brand" }, h("span", { class: "logo", "aria-hidden": "true" }, "▦"), h("span", { class: "ws-name" }, state.info.workspace.name)),
    boards,
    // not live regions: they follow every agent write; each opens its words in a panel
    ...signalControls((id) => actions.card(id)),
    // in the page's order where a short, narrow window folds them behind ☰ (barmenu.ts)
    ...barMenu([
      h("nav", { id: "filters", class: "chips", "aria-label": "Saved filters" }),
      search,
      h("label", { class: "actor-pick" }, h("span", { class: "muted" }, "as"), actor),
    ]),
    h("span", { class: "spacer" }),
    h("span", { id: "live-status", class: "live-status", role: "status", title: "live updates" },
      h("span", {}, h("span", { class: "live-words" }), h("span", { class: "live-wait", "aria-hidden": "true" }))),
    h("button", { type: "button", id: "new-card", class: "primary", onclick: () => actions.create(), title: "New card (n)", "aria-label": "New card" },
      "+", h("span", { class: "label" }, " New card")));
  if (lastStatus) showLiveStatus(...lastStatus);
  syncChrome(actions);
}

function actorOptions(): HTMLOptionElement[] {
  return state.info.workspace.users.map((u) => h("option", { value: u.id }, `${u.display_name || u.id}${u.kind === "agent" ? " (agent)" : ""}`) as HTMLOptionElement);
}

// the users read again: the actor picker offers them, keeping the person's choice
onUsersChanged(() => {
  const actor = $("#actor") as HTMLSelectElement | null;
  if (!actor) return;
  actor.replaceChildren(...actorOptions());
  actor.value = state.actor;
});
// back in the tab after registering a user in a terminal
window.addEventListener("focus", readUsersAgain);

/** Brings the controls in line with the state (board switch, back/forward, actor change). */
export function syncChrome(actions: ChromeActions): void {
  const boards = $("#board-picker") as HTMLSelectElement | null;
  if (boards) { boards.value = state.board.id; boards.title = state.board.description ?? state.board.name; }
  const actor = $("#actor") as HTMLSelectElement | null;
  if (actor) actor.value = state.actor;
  const search = $("#search") as HTMLInputElement | null;
  if (search && search.value.trim() !== state.q) search.value = state.q;
  markNarrowed();
  const names = Object.keys(state.board.presentation?.filters ?? {});
  const wanted = names.length ? ["", ...names] : [];
  const bar = $("#filters")!;
  const chips = [...bar.querySelectorAll<HTMLButtonElement>("button.chip")];
  // the same chips (a filter picked, back/forward): only their pressed state changes, so a
  // chip pressed with the keyboard keeps the focus
  if (chips.length === wanted.length && chips.every((c, i) => c.dataset.filter === wanted[i])) {
    for (const c of chips) c.setAttribute("aria-pressed", String(state.filter === c.dataset.filter));
    return;
  }
  const chip = (name: string, text: string) => h("button", {
    type: "button", class: "chip", "aria-pressed": String(state.filter === name), "data-filter": name,
    onclick: () => actions.filter(state.filter === name ? "" : name),
  }, text);
  bar.replaceChildren(...wanted.map((n) => chip(n, n || "All")));
}

/** Writes only a change: an unchanged text is not written again (nor read out again). */
function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

let retryTicker: ReturnType<typeof setInterval> | undefined;

/** the last status shown: a rebuilt top bar (definitions reloaded) shows it again */
let lastStatus: [LiveStatus, number | undefined] | undefined;

/**
 * The live dot and its words. The region (role=status) is read out whenever its words
 * change, so they change only with the state: "offline — retrying" is said once when the
 * stream is lost and "live" once when it is back. Offline, the seconds until the next
 * attempt count down beside them in an aria-hidden part, seen and not read out each second.
 */
export function showLiveStatus(s: LiveStatus, retryAt?: number): void {
  lastStatus = [s, retryAt];
  const el = $("#live-status");
  if (!el) return;
  clearInterval(retryTicker);
  retryTicker = undefined;
  el.dataset.state = s;
  const words = el.querySelector<HTMLElement>(".live-words");
  const wait = el.querySelector<HTMLElement>(".live-wait");
  if (!words || !wait) return;
  if (s !== "offline") {
    setText(words, s === "live" ? "live" : "reconnecting…");
    setText(wait, "");
    el.title = "live updates";
    return;
  }
  setText(words, "offline — retrying");
  const count = () => {
    const secs = retryAt === undefined ? 0 : Math.ceil((retryAt - Date.now()) / 1000);
    setText(wait, secs > 0 ? ` in ${secs}s` : "…");
  };
  count();
  el.title = "The server does not answer: live updates resume, with what was missed, once it is back";
  if (retryAt !== undefined) retryTicker = setInterval(count, 1000);
}
