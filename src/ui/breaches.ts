/**
 * The conditions that hold now on the open board (GET /breaches): a card past its
 * max_time_in_status (status_timeout) or idle (card_idle) gets a badge on its face, and a
 * watched lane that drained (alert_when_empty, a `lane_limit` item) is marked. The list is
 * read with the board and re-read after stream events (batched by the caller), never polled.
 */
import { api, qs } from "./api.ts";
import { elapsed, h } from "./dom.ts";
import { columnName, state } from "./state.ts";
import type { Breach, Breaches } from "./types.ts";

let seq = 0;

/** What the face of a card shows of its breaches (part of its render cache key). */
export function breachSig(id: string): string {
  return (state.cardBreaches.get(id) ?? []).map((b) => `${b.kind}@${b.since}`).join(",");
}

/** Reads the board's breaches. Resolves the lanes whose marks changed (null: superseded). */
export async function loadBreaches(): Promise<Set<string> | null> {
  const mine = ++seq;
  const boardId = state.board.id;
  const res = await api<Breaches>("GET", `/breaches${qs({ board_id: boardId })}`);
  if (mine !== seq || boardId !== state.board.id) return null;
  const before = new Map([...state.cards.keys()].map((id) => [id, breachSig(id)]));
  const drainedBefore = state.drained;
  state.breaches = res.items;
  state.cardBreaches = new Map();
  state.drained = new Set();
  for (const b of res.items) {
    if (b.kind === "lane_limit" && b.count === 0 && b.column) state.drained.add(b.column);
    if ((b.kind === "status_timeout" || b.kind === "card_idle") && b.card_id) {
      state.cardBreaches.set(b.card_id, [...(state.cardBreaches.get(b.card_id) ?? []), b]);
    }
  }
  const touched = new Set<string>();
  for (const [id, sig] of before) if (sig !== breachSig(id)) touched.add(state.cards.get(id)!.status);
  for (const c of new Set([...drainedBefore, ...state.drained])) if (drainedBefore.has(c) !== state.drained.has(c)) touched.add(c);
  return touched;
}

/** How a breach reads to a person: "Review: 5h 20m in this status (limit 4h)". */
export function describeBreach(b: Breach): string {
  const since = b.since ? elapsed(b.since) : "";
  if (b.kind === "status_timeout") return `${columnName(b.status ?? "")}: ${since} in this status (limit ${b.max})`;
  if (b.kind === "card_idle") return `No change for ${since} (idle after ${b.threshold})`;
  if (b.kind === "lane_limit") return `${columnName(b.column ?? "")} is empty (watched lane)`;
  if (b.kind === "wip_exceeded") return `${columnName(b.column ?? "")} holds ${b.count} cards, over its limit of ${b.limit}`;
  return "blocked";
}

/** The badges of a card's timeouts: "stuck" past its time in status, "idle" without changes. */
export function breachBadges(id: string): HTMLElement[] {
  return (state.cardBreaches.get(id) ?? []).map((b) => h("span", {
    class: `breach-badge ${b.kind === "status_timeout" ? "stuck" : "idle"}`, "data-breach": b.kind, title: describeBreach(b),
  }, b.kind === "status_timeout" ? "stuck" : "idle"));
}

/** The top bar's summary: how many conditions hold, by kind. */
export function breachSummary(): { count: number; text: string } {
  const n = (kind: Breach["kind"]) => state.breaches.filter((b) => b.kind === kind).length;
  const parts = [
    [n("status_timeout"), "past their time in status"], [n("card_idle"), "idle"],
    [n("lane_limit"), "watched lanes empty"], [n("wip_exceeded"), "lanes over their WIP limit"], [n("card_blocked"), "blocked"],
  ].filter(([k]) => k).map(([k, what]) => `${k} ${what}`);
  return { count: state.breaches.length, text: parts.join(", ") };
}
