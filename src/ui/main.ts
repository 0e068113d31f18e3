/**
 * Entry point of the board UI. Reads the workspace, picks the board (URL, else the default
 * board), loads its lanes, follows the event stream, and wires clicks, drags and keys.
 * URL: /ui/?board=ID&filter=NAME&q=TEXT&card=CARD_ID
 */
import { getWorkspace, setActor } from "./api.ts";
import { moveCard } from "./actions.ts";
import { announce, cards } from "./announce.ts";
import { boardRoot, clearCardCache, renderBoard, renderLanes, setFocusCard } from "./board.ts";
import { loadBreaches } from "./breaches.ts";
import { applyTheme, renderChrome, showLiveStatus, syncChrome, type ChromeActions } from "./chrome.ts";
import { openCreate } from "./create.ts";
import { laneCards, loadBoard, loadMore, needsFullReload } from "./data.ts";
import { closeDetail, editInProgress, isOpen, openDetail, refreshDetail, setCloseHandler, showConditions } from "./detail.ts";
import { h, throttle, $ } from "./dom.ts";
import { installDrag } from "./drag.ts";
import { followCards } from "./follow.ts";
import { countHidden } from "./hidden.ts";
import { installKeyboard } from "./keyboard.ts";
import { installPanelFocus } from "./panelfocus.ts";
import { showSignals } from "./signals.ts";
import { connectLive } from "./live.ts";
import { boardOrder, columnName, matchingCount, narrowed, state } from "./state.ts";
import * as toast from "./toast.ts";

const ACTOR_KEY = "cards.actor";

declare global {
  interface Window { cardsReady?: number }
}

function readUrl(): URLSearchParams {
  return new URLSearchParams(location.search);
}

function writeUrl(push: boolean): void {
  const p = new URLSearchParams();
  p.set("board", state.board.id);
  if (state.filter) p.set("filter", state.filter);
  if (state.q) p.set("q", state.q);
  if (state.openCard) p.set("card", state.openCard);
  const url = `${location.pathname}?${p}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

/** Reads and draws the board; resolves true when this read was drawn (not superseded, no error). */
async function reload(): Promise<boolean> {
  boardRoot().setAttribute("aria-busy", "true");
  try {
    if (await loadBoard()) {
      performance.mark("cards:fetched");
      renderLanes(state.board.columns);
      performance.mark("cards:drawn");
      return true;
    }
  } catch (e) {
    toast.error(e, "Could not load the board");
  } finally {
    boardRoot().setAttribute("aria-busy", "false");
  }
  return false;
}

/** After a filter or search: how many cards the view holds now (the lanes' counts say it only lane by lane). */
async function reloadAndSayMatches(): Promise<void> {
  if (!(await reload())) return;
  const n = state.board.columns.reduce((sum, col) => sum + matchingCount(col, laneCards(col).length), 0);
  announce(narrowed() ? `${n === 0 ? "No cards" : cards(n)} match${n === 1 ? "es" : ""}.` : `Showing all ${cards(n)}.`);
}

/**
 * Moves by others (agents on the CLI or MCP, other people) said in words, gathered over a
 * second: "agent-1 moved “Fix login” to Review." One move the person makes themselves is
 * announced by moveCard.
 */
const MOVES_EVERY_MS = 1000;
let moves: string[] = [];
let movesTimer: ReturnType<typeof setTimeout> | undefined;
function sayMove(actor: string, card: string, to: string): void {
  moves.push(`${actor} moved “${card}” to ${columnName(to)}.`);
  movesTimer ??= setTimeout(() => {
    movesTimer = undefined;
    const said = moves.length > 3 ? `${moves.length} cards moved on the board.` : moves.join(" ");
    moves = [];
    announce(said);
  }, MOVES_EVERY_MS);
}
/**
 * Live writes may never pause, so the re-reads they cause are throttled, not debounced: the
 * first runs at once, then at most one per interval for as long as the writes go on.
 */
const RELOAD_EVERY_MS = 750;
const reloadSoon = throttle(reload, RELOAD_EVERY_MS);

/**
 * Re-reads the board's breaches (one request) and, at most every HIDDEN_EVERY_MS, the
 * hidden-card count (two paged reads of the board's cards: too many to repeat on every
 * burst of agent writes).
 */
async function refreshSignals(withHidden = false): Promise<void> {
  try {
    const wait = withHidden ? 0 : hiddenAt + HIDDEN_EVERY_MS - Date.now();
    const hidden = wait <= 0;
    if (hidden) hiddenAt = Date.now();
    // counted lately: count once more when the interval is up, so the last change shows
    else hiddenTimer ??= setTimeout(() => { hiddenTimer = undefined; void refreshSignals(true); }, wait);
    const [lanes] = await Promise.all([loadBreaches(), hidden ? countHidden() : undefined]);
    if (lanes) renderLanes(lanes);
    showSignals();
    showConditions();
  } catch {
    // a signal is a hint on top of the board: the next event or load reads it again
  }
}
const HIDDEN_EVERY_MS = 5000;
let hiddenAt = 0;
let hiddenTimer: ReturnType<typeof setTimeout> | undefined;

let signalsTimer: ReturnType<typeof setTimeout> | undefined;
/** at most one breaches read a second per page, however many agents write */
const SIGNALS_EVERY_MS = 1000;
/** events that may start or end a breach of a card not drawn on this board yet */
const ENTERS = new Set(["card_created", "status_timeout", "card_idle", "card_blocked", "card_unblocked"]);
/** One re-read per burst of events (batched, not debounced, so a steady stream still updates). */
function refreshSignalsSoon(): void {
  signalsTimer ??= setTimeout(() => { signalsTimer = undefined; void refreshSignals(); }, SIGNALS_EVERY_MS);
}

async function showBoard(id: string, filter: string, q: string): Promise<void> {
  const changed = state.board.id !== id;
  state.board = state.info.boards[id]!;
  state.filter = filter in (state.board.presentation?.filters ?? {}) ? filter : "";
  state.q = q;
  if (changed) {
    clearCardCache();
    state.cards = new Map();
    state.lanes = {};
    state.counts = null;
    state.totals = null;
    state.breaches = [];
    state.cardBreaches = new Map();
    state.drained = new Set();
    state.hidden = { count: 0, more: false };
    showSignals();
    applyTheme(state.board.theme);
    document.title = `${state.board.name} · cards`;
    renderBoard();
  }
  syncChrome(chromeActions);
  void refreshSignals(true);
  await reload();
}

const chromeActions: ChromeActions = {
  board: (id) => { closeDetail(); void showBoard(id, "", "").then(() => writeUrl(true)); },
  filter: (name) => { state.filter = name; syncChrome(chromeActions); writeUrl(true); void reloadAndSayMatches(); },
  search: (q) => { state.q = q; writeUrl(false); void reloadAndSayMatches(); },
  actor: (id) => {
    state.actor = id;
    setActor(id);
    localStorage.setItem(ACTOR_KEY, id);
    toast.info(`Acting as ${id}`);
    if (state.filter) void reload(); // saved filters may say "me"
    refreshDetail(); // Claim and Release follow who the person acts as
  },
  create: () => openCreate(),
  card: (id) => open(id),
};

async function showMore(button: HTMLButtonElement): Promise<void> {
  const status = button.dataset.more!;
  button.disabled = true;
  try {
    if (await loadMore(status)) renderLanes([status]);
  } catch (e) {
    toast.error(e, "Could not load more cards");
  } finally {
    button.disabled = false;
  }
}

function open(id: string): void {
  setFocusCard(id);
  void openDetail(id);
  writeUrl(true);
}

async function boot(): Promise<void> {
  state.info = await getWorkspace();
  performance.mark("cards:workspace");
  const users = state.info.workspace.users.map((u) => u.id);
  const saved = localStorage.getItem(ACTOR_KEY) ?? "";
  state.actor = users.includes(saved) ? saved : (state.info.workspace.settings.default_user ?? users[0] ?? "");
  setActor(state.actor);
  renderChrome(chromeActions);
  setCloseHandler(() => writeUrl(true));

  connectLive({
    status: showLiveStatus,
    resync: () => void getWorkspace().then((info) => {
      // definitions edited while the stream was down: rebuild as a live reload does
      if (JSON.stringify(info) !== JSON.stringify(state.info)) applyDefinitions(info);
      else reloadSoon();
      refreshSignalsSoon();
      refreshDetail();
    }, () => { reloadSoon(); refreshSignalsSoon(); }),
    // a write on another board's cards changes nothing here
    conditions: (e) => {
      const moved = e.type === "status_changed" && e.card_id ? state.cards.get(e.card_id) : undefined;
      if (moved && e.actor !== state.actor && typeof e.diff.after === "string") sayMove(e.actor, moved.title, e.diff.after);
      const mine = e.scope === "board" ? e.board_id === state.board.id : state.cards.has(e.card_id ?? "") || ENTERS.has(e.type);
      if (mine) refreshSignalsSoon();
    },
    cards: (ids) => {
      if (needsFullReload()) reloadSoon(); // a narrowed view cannot tell from one card what matches
      else void followCards(ids, reloadSoon);
      // the open card, or one the panel shows (a link, a card that links to it: deleted, renamed)
      if (state.openCard && (ids.includes(state.openCard) || ids.some((id) => document.querySelector(`#detail [data-open="${CSS.escape(id)}"]`)))) refreshDetail();
    },
    definitions: () => void getWorkspace().then((info) => {
      applyDefinitions(info);
      toast.info("Definitions reloaded");
    }),
  });

  const drag = installDrag(boardRoot(), (id, to, seen) => void moveCard(id, to, seen));
  boardRoot().addEventListener("click", (ev) => {
    const more = (ev.target as HTMLElement).closest<HTMLButtonElement>("button.lane-more");
    if (more) { void showMore(more); return; }
    const card = (ev.target as HTMLElement).closest<HTMLElement>(".card");
    if (!card || drag.justDragged() || (ev.target as HTMLElement).closest("a,button")) return;
    open(card.dataset.id!);
  });
  document.addEventListener("click", (ev) => {
    const ref = (ev.target as HTMLElement).closest<HTMLAnchorElement>("a[data-open]");
    if (!ref || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    open(ref.dataset.open!);
  });
  installKeyboard({
    open,
    close: () => { if (!isOpen()) return false; closeDetail(); return true; },
    editing: () => isOpen() && editInProgress(),
    move: (id, to) => void moveCard(id, to).then((ok) => { if (ok) document.querySelector<HTMLElement>(`.card[data-id="${CSS.escape(id)}"]`)?.focus(); }),
    create: () => openCreate(),
  });
  installPanelFocus($("#detail")!);
  window.addEventListener("popstate", () => void fromUrl());

  await fromUrl();
  window.cardsReady = performance.now(); // ms since navigation start: page, scripts, workspace, every lane
  document.body.dataset.ready = "true";
}

/** Swaps in a new workspace description and rebuilds the chrome and the board with it. */
function applyDefinitions(info: typeof state.info): void {
  state.info = info;
  const id = info.boards[state.board.id] ? state.board.id : boardOrder()[0]!;
  state.board = { ...state.board, id: "" }; // force a rebuild with the new definition
  renderChrome(chromeActions);
  void showBoard(id, state.filter, state.q);
}

async function fromUrl(): Promise<void> {
  const p = readUrl();
  const wanted = p.get("board") ?? "";
  const id = state.info.boards[wanted] ? wanted : boardOrder()[0];
  if (!id) {
    boardRoot().replaceChildren(h("p", { class: "empty-workspace" }, "This workspace has no boards yet."));
    return;
  }
  await showBoard(id, p.get("filter") ?? "", p.get("q") ?? "");
  const card = p.get("card");
  if (card && card !== state.openCard) await openDetail(card, false);
  else if (!card && isOpen()) closeDetail();
}

boot().catch((e) => {
  $("#board")?.replaceChildren(h("div", { class: "fatal" }, h("h2", {}, "The board could not load"), ...toast.errorParts(toast.toBody(e))));
});
