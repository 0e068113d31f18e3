/**
 * Writes from the board: moves (optimistic, snapping back on refusal), patches and other
 * card writes. Every write sends the card's version; a refusal shows the error envelope.
 */
import { api, ApiError, cardPath, patchCard, patchKeys, sendVersioned } from "./api.ts";
import { announce } from "./announce.ts";
import { cardElement, countWords, renderLanes } from "./board.ts";
import { applyCard, pending, refreshCards, shiftCount, shortLanes } from "./data.ts";
import { refillSoon } from "./follow.ts";
import { columnName, state } from "./state.ts";
import * as toast from "./toast.ts";
import type { Card } from "./types.ts";

type Listener = (card: Card) => void;
const listeners: Listener[] = [];

/** Called with every card a write returned (the detail panel follows its card this way). */
export function onCardWritten(fn: Listener): void {
  listeners.push(fn);
}

/** Shows a card a write returned; `moved`: the person moved it, so it stays in sight in its new lane. */
export function written(card: Card, moved = false): Card {
  renderLanes(applyCard(card, moved));
  if (!state.cards.has(card.id)) void refreshCards([card.id]).then(renderLanes);
  if (shortLanes().length) refillSoon();
  for (const fn of listeners) fn(card);
  return card;
}

/**
 * Moves a card to another lane. The write is sent first, then the card is shown in its new
 * lane (only that card's element moves). Resolves true when the server accepted the move.
 * `seen`: the card as the person took it (a drag): the move is judged against it, so a
 * move an agent made meanwhile is a conflict that names them, not silently undone.
 */
export async function moveCard(id: string, to: string, seen?: Card): Promise<boolean> {
  const card = state.cards.get(id);
  if (!card || card.status === to) return false;
  pending.add(id);
  const answer = patchKeys(seen ?? card, { status: to });
  state.cards.set(id, { ...card, status: to });
  shiftCount(card.status, to);
  renderLanes([card.status, to]);
  try {
    written(await answer, true);
    announce(`Moved “${card.title}” to ${columnName(to)}: ${countWords(to)}.`);
    return true;
  } catch (e) {
    const body = toast.toBody(e);
    const current = body.card ?? card;
    if (state.cards.has(id)) state.cards.set(id, current);
    shiftCount(to, current.status);
    renderLanes([to, card.status, current.status]);
    const el = cardElement(id);
    if (el) {
      el.classList.remove("snapback");
      void el.offsetWidth; // restart the animation
      el.classList.add("snapback");
    }
    toast.error(e, `Could not move “${card.title}” to ${columnName(to)}`);
    if (body.card) for (const fn of listeners) fn(body.card);
    return false;
  } finally {
    pending.delete(id);
  }
}

/**
 * PATCH with the card's version; refusals are shown and rethrown for forms to mark fields.
 * `overNewer`: a picker's change, applied over writes that left its keys alone (patchKeys).
 */
export async function patch(card: Card, changes: Record<string, unknown>, o: { overNewer?: boolean } = {}): Promise<Card> {
  try {
    return written(await (o.overNewer ? patchKeys : patchCard)(card, changes));
  } catch (e) {
    const body = toast.toBody(e);
    if (body.card) written(body.card);
    throw e;
  }
}

/** Any other card write (comments, links, entries, claims): the answer is the updated card. */
export async function write(method: string, id: string, rest: string, body?: unknown): Promise<Card> {
  const res = await api<Card | { card: Card }>(method, cardPath(id, rest), body);
  const card = "card" in res && res.card && typeof res.card === "object" && !("id" in res) ? res.card : (res as Card);
  return written(card);
}

/**
 * Claims the card for the person (POST /claim, compare-and-set on the version). A stale
 * version whose card is still unowned (an agent wrote to it meanwhile) is tried once
 * more over the newer one; a card someone claimed meanwhile is refused, naming them.
 */
export async function claim(card: Card, me: string): Promise<Card> {
  try {
    return await sendVersioned(card.version, (version) => write("POST", card.id, "/claim", { version }), (now) => !now.owner);
  } catch (e) {
    const now = toast.toBody(e).card;
    if (toast.toBody(e).error !== "version_conflict" || !now?.owner) throw e;
    // claimed meanwhile: by the person (another tab) is what they asked for; by someone else, say who
    if (now.owner === me) return written(now);
    written(now);
    throw new ApiError(409, { error: "owned", message: `${now.owner} has claimed this card`, hint: "pick yourself as its owner to take it over" });
  }
}

/** A write of one repeating entry (append, update, remove) over a newer version when the entry is still as the person saw it. */
export function writeEntry(card: Card, method: string, path: string, body: (version: number) => unknown, stillApplies: (now: Card) => boolean): Promise<Card> {
  return sendVersioned(card.version, (version) => method === "DELETE"
    ? write("DELETE", card.id, `${path}?version=${version}`)
    : write(method, card.id, path, body(version)), stillApplies);
}

/** Gives the person's card back (POST /release, no version: only its owner may). */
export function release(card: Card): Promise<Card> {
  return write("POST", card.id, "/release", {});
}