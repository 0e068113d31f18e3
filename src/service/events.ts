/** The durable event feed: GET /events and the per-card events route. */
import { badRequest, notFound, CardsError } from "../domain/errors.ts";
import { parseEventId } from "../domain/ids.ts";
import { ALL_EVENT_TYPES, type StoredEvent } from "../domain/types.ts";
import type { EventQuery } from "../store/port.ts";
import { csv, ownerParam, parseLimit, type ListParams } from "./list.ts";
import type { Service } from "./service.ts";

export const EVENTS_DEFAULT_LIMIT = 100;
export const EVENTS_MAX_LIMIT = 500;

/** The types the durable feed can hold: card facts and conditions (persisted ones are logged; persist_conditions). */
const FEED_TYPES = ALL_EVENT_TYPES.filter((t) => t !== "definition_reloaded" && t !== "definition_reload_failed");
const EVENT_PARAMS = ["actor", "owner", "type", "types", "board_id", "since", "cursor", "limit"];

/** `next_cursor` is absent once the feed is exhausted (SPEC: "empty or absent"). */
export interface EventPage { items: StoredEvent[]; next_cursor?: string }

/**
 * Ordered by id; `since` and `cursor` are exclusive floors and `cursor` wins. `me` in
 * `actor` or `owner` is the viewer; an owner nobody is, nor registered, is refused as in
 * GET /cards (the feed's owner is the card's current one: its page would be empty).
 */
export function listEvents(svc: Service, p: ListParams, viewer?: string): EventPage {
  for (const k of Object.keys(p)) {
    if (!EVENT_PARAMS.includes(k)) throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, valid_options: EVENT_PARAMS });
  }
  // an empty value is an absent one: `cursor=` (an exhausted feed's next_cursor, templated
  // in) must not override `since` and restart the feed from event 1
  p = Object.fromEntries(Object.entries(p).filter(([, v]) => v !== ""));
  const q: EventQuery = { limit: parseLimit(p.limit, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT) };
  const floor = p.cursor ?? p.since;
  if (floor !== undefined && floor !== "") {
    if (parseEventId(floor) === null) throw notAnEventId(p.cursor !== undefined ? "cursor" : "since", floor);
    q.afterId = floor;
  }
  // `type` and `types` are one filter (SPEC names both); an error names the one the value came from
  const given = [...(p.type !== undefined ? csv(p.type).map((t) => [t, "type"] as const) : []), ...(p.types !== undefined ? csv(p.types).map((t) => [t, "types"] as const) : [])];
  if (given.length) {
    for (const [t, field] of given) {
      // the definition lifecycle events are live only (SPEC): a feed filtered on them is always empty
      if (t === "definition_reloaded" || t === "definition_reload_failed") {
        throw new CardsError("validation_failed", `${t} is not in the durable feed: it is published live only`, {
          field, value: t, valid_options: FEED_TYPES,
          hint: `follow it live: GET /events/stream?types=${t} (CLI: cards events --follow --types ${t})`,
        });
      }
      if (!(ALL_EVENT_TYPES as readonly string[]).includes(t)) throw new CardsError("validation_failed", `unknown event type ${JSON.stringify(t)}`, { field, value: t, valid_options: FEED_TYPES });
    }
    q.types = given.map(([t]) => t);
  }
  if (p.actor !== undefined) q.actor = ownerParam(svc, p.actor, viewer, false, "actor");
  // checked on a first read only: a poll (since, cursor) may wait for an owner still to come
  if (p.owner !== undefined) q.owner = ownerParam(svc, p.owner, viewer, p.cursor === undefined && p.since === undefined);
  if (p.board_id !== undefined) {
    q.cardTypeIds = svc.board(p.board_id).card_type_ids;
    q.boardId = p.board_id;
  }
  const items = svc.store.listEvents({ ...q, limit: q.limit + 1 });
  const more = items.length > q.limit;
  const page = more ? items.slice(0, q.limit) : items;
  return more ? { items: page, next_cursor: page[page.length - 1]!.id } : { items: page };
}

/**
 * GET /cards/{id}/events: the card's events in id order (also after deletion): the first
 * `limit` after `since`, or with `newest` (and no `since`) the last `limit`.
 */
export function cardEvents(svc: Service, cardId: string, p: ListParams, opts: { newest?: boolean } = {}): { items: StoredEvent[] } {
  for (const k of Object.keys(p)) {
    if (k !== "limit" && k !== "since") throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, valid_options: ["limit", "since"] });
  }
  const limit = parseLimit(p.limit, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
  const q: EventQuery = { cardId, limit };
  if (opts.newest && p.since === undefined) q.newest = true;
  if (p.since !== undefined) {
    if (parseEventId(p.since) === null) throw notAnEventId("since", p.since);
    q.afterId = p.since;
  }
  const items = svc.store.listEvents(q);
  if (items.length === 0 && !svc.store.getCard(cardId)) throw notFound("card", cardId);
  return { items };
}

/** `since` / `cursor` is an event id; a time is the usual mistake: say where times are asked. */
export function notAnEventId(field: string, value: string, label = field): CardsError {
  const time = /^\d{4}-\d\d-\d\d/.test(value);
  return badRequest(`${label} must be an event id`, {
    field, value,
    hint: time
      ? `${field} takes an event id (an event's id, or a page's next_cursor), not a time: for what changed since a time, list cards (newest updated first: GET /cards, CLI cards cards list) until updated_at is older, or page the feed and keep events whose at is later`
      : /^\d+$/.test(value)
        ? "an event id has at most 15 digits, as in an event's id (000000000123) or a page's next_cursor"
        : "an event id is a number, as in an event's id (000000000123) or a page's next_cursor",
  });
}
