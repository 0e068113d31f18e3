/**
 * Filters of a live event subscription (GET /events/stream, `cards events --follow`):
 * card_id, board_id, types, actor, owner, since. One rule for every surface; the
 * per-event lookups (a card's type, its current owner) are memoised on the event object,
 * which every subscriber shares.
 */
import { CardsError, badRequest, notFound } from "../domain/errors.ts";
import { parseEventId } from "../domain/ids.ts";
import { ALL_EVENT_TYPES, type CardEvent, type StoredEvent } from "../domain/types.ts";
import { eventCardType } from "../events/card-type.ts";
import { ownerParam } from "./list.ts";
import { notAnEventId } from "./events.ts";
import type { Service } from "./service.ts";

export const STREAM_PARAMS = ["card_id", "board_id", "types", "actor", "owner", "since"] as const;
export const STREAM_REPLAY_LIMIT = 500;

export interface StreamFilter {
  types?: string[];
  card_id?: string;
  board_id?: string;
  actor?: string;
  owner?: string;
  /** replay after this event id, then live */
  since?: string;
  /** the board's card types when board_id is given, as the stream opened (replay reads them; live events read the board's types now) */
  boardTypes?: string[];
}

/** Validates stream query parameters (400 on an unknown one, an unknown type or a bad id). */
export function parseStreamFilter(svc: Service, q: Record<string, string | undefined>, since?: string, viewer?: string): StreamFilter {
  for (const k of Object.keys(q)) {
    if (!(STREAM_PARAMS as readonly string[]).includes(k)) throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, valid_options: [...STREAM_PARAMS] });
  }
  const types = q.types ? q.types.split(",").map((s) => s.trim()).filter(Boolean) : undefined;
  for (const t of types ?? []) {
    if (!(ALL_EVENT_TYPES as readonly string[]).includes(t)) throw new CardsError("validation_failed", `unknown event type ${JSON.stringify(t)}`, { field: "types", value: t, valid_options: [...ALL_EVENT_TYPES] });
  }
  const f: StreamFilter = {};
  if (types) f.types = types;
  // an empty value is an absent one (`?actor=&owner=` from a form or a script's template)
  for (const k of ["card_id", "board_id", "actor", "owner"] as const) if (q[k] !== undefined && q[k] !== "") f[k] = q[k];
  // "me" is the viewer, as in the feed; other names are not checked: a stream waits for
  // owners and actors still to come (an agent may take work unregistered)
  if (f.actor !== undefined) f.actor = ownerParam(svc, f.actor, viewer, false, "actor");
  if (f.owner !== undefined) f.owner = ownerParam(svc, f.owner, viewer, false);
  if (f.board_id !== undefined) f.boardTypes = svc.board(f.board_id).card_type_ids;
  // a card that never existed never gets an event: a typo would stream keep-alives forever
  // (a deleted card's id is accepted: its events are history, and GET /cards/{id}/events answers them)
  if (f.card_id !== undefined && !svc.store.getCard(f.card_id) && svc.store.listEvents({ cardId: f.card_id, limit: 1 }).length === 0) {
    throw notFound("card", f.card_id, undefined, "card_id");
  }
  const from = since ?? q.since;
  if (from !== undefined && from !== "") {
    const n = parseEventId(from);
    if (n === null) throw notAnEventId("since", from, "Last-Event-ID / since");
    // an id past the log's end (another workspace's, or one from before a backup was put
    // back) would mute the stream until the log caught up with it: refused, naming the end
    const head = svc.store.lastEventId();
    if (n > (head === null ? 0 : (parseEventId(head) ?? 0))) {
      throw badRequest(`Last-Event-ID / since ${from} is past the newest event of this workspace (${head ?? "none yet"})`, {
        field: "since", value: from,
        hint: `it comes from another workspace, or from before this one was restored from a backup: resume ${head ? `with since=${head} (cards events --follow --since ${head})` : "without it"}, after reading what you missed from GET /v1/events`,
      });
    }
    f.since = from;
  }
  return f;
}

/** The predicate of a filter. */
export function eventMatcher(svc: Service, f: StreamFilter): (e: CardEvent) => boolean {
  // `since` is a floor for live events too
  const floor = f.since !== undefined ? Number(f.since) : undefined;
  return (e) => {
    if (floor !== undefined && "id" in e && typeof e.id === "string" && Number(e.id) <= floor) return false;
    if (f.types && !f.types.includes(e.type)) return false;
    if (f.card_id !== undefined && e.card_id !== f.card_id) return false;
    if (f.actor !== undefined && e.actor !== f.actor) return false;
    if (f.board_id !== undefined) {
      if (e.scope === "board") { if (e.board_id !== f.board_id) return false; }
      // the board's types now: a reload that adds a type to the board, or takes one off, reaches open streams too
      else if (!(svc.origin.defs.boards.get(f.board_id)?.card_type_ids ?? f.boardTypes!).includes(cardTypeOf(svc, e) ?? "")) return false;
    }
    if (f.owner !== undefined && (!e.card_id || ownerOf(svc, e) !== f.owner)) return false;
    return true;
  };
}

/** The durable events after `f.since` that the filter may match (at most 500; match each). */
export function replayEvents(svc: Service, f: StreamFilter, limit = STREAM_REPLAY_LIMIT): StoredEvent[] {
  if (f.since === undefined) return [];
  return svc.store.listEvents({
    afterId: f.since, types: f.types, actor: f.actor, owner: f.owner, cardId: f.card_id, cardTypeIds: f.boardTypes, boardId: f.board_id, limit,
  });
}

const typeCache = new WeakMap<CardEvent, string | undefined>();
const ownerCache = new WeakMap<CardEvent, string | undefined>();

function cardTypeOf(svc: Service, e: CardEvent): string | undefined {
  if (!typeCache.has(e)) typeCache.set(e, eventCardType(svc.store, e));
  return typeCache.get(e);
}

function ownerOf(svc: Service, e: CardEvent): string | undefined {
  if (!ownerCache.has(e)) ownerCache.set(e, e.card_id ? svc.store.getCard(e.card_id)?.owner : undefined);
  return ownerCache.get(e);
}
