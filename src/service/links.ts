/**
 * Links live on their source card. The type must exist, both endpoint types must match
 * a typed link type, the target must exist; adding the same (type, target) twice is a
 * no-op. Blocking links signal card_blocked / card_unblocked on each crossing.
 */
import { CardsError, shortIdHint } from "../domain/errors.ts";
import { BLOCKING_LINK_TYPES, type Card, type Link } from "../domain/types.ts";
import type { StoreTx } from "../store/port.ts";
import { BlockWatch } from "./blocking.ts";
import { commitUpdate, loadForWrite, withParts } from "./cards.ts";
import { LinkBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

/** A link's note (docs/limits.md). */
export const MAX_LINK_NOTE_BYTES = 4096;
/** Links a card holds (outgoing; docs/limits.md): every read and write of it returns them all. */
export const MAX_LINKS_PER_CARD = 2000;

export async function addLink(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<Card> {
  const body = parseShape(LinkBody, input, "add link");
  if (body.note !== undefined && new TextEncoder().encode(body.note).byteLength > MAX_LINK_NOTE_BYTES) {
    throw new CardsError("payload_too_large", `link note over ${MAX_LINK_NOTE_BYTES} bytes`, { field: "note", hint: "shorten the note; put the details in a comment" });
  }
  const linkTypes = svc.defs.workspace.link_types;
  const lt = linkTypes.find((t) => t.id === body.type_id);
  if (!lt) {
    throw new CardsError("validation_failed", `unknown link type ${JSON.stringify(body.type_id)}`, {
      field: "type_id", value: body.type_id, valid_options: linkTypes.map((t) => t.id),
    });
  }
  if (body.target === id) throw new CardsError("validation_failed", "a card cannot link to itself", { field: "target", value: body.target });
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
    const target = w.tx.getCard(body.target);
    if (!target) throw new CardsError("target_card_missing", `link target ${body.target} does not exist`, { field: "target", value: body.target, ...shortIdHint(body.target) });
    if (lt.source_types && !lt.source_types.includes(cur.type_id)) {
      throw new CardsError("target_card_type_mismatch", `${lt.id} links may start only from ${lt.source_types.join(", ")} cards, not ${cur.type_id}`, {
        field: "type_id", value: cur.type_id, valid_options: lt.source_types,
      });
    }
    if (lt.target_types && !lt.target_types.includes(target.type_id)) {
      throw new CardsError("target_card_type_mismatch", `${lt.id} links may point only at ${lt.target_types.join(", ")} cards, not ${target.type_id}`, {
        field: "target", value: body.target, valid_options: lt.target_types,
      });
    }
    const links = w.tx.listLinks(id);
    if (links.some((l) => l.type_id === lt.id && l.target === target.id)) return withParts(w.tx, cur);
    if (links.length >= MAX_LINKS_PER_CARD) {
      throw new CardsError("validation_failed", `card ${id} has ${links.length} links, the most one card takes`, {
        field: "target", hint: "group the targets under a card of their own and link that one, or split this card",
      });
    }
    const blocks = BLOCKING_LINK_TYPES.includes(lt.id) ? new BlockWatch(w.tx).watch([id]) : undefined;
    if (blocks) {
      const loop = waitPath(w.tx, target.id, id);
      if (loop) {
        const shown = loop.length > 8 ? [...loop.slice(0, 4), `… ${loop.length - 6} more …`, ...loop.slice(-2)] : loop;
        throw new CardsError("validation_failed", `${id} would wait on ${target.id}, which already waits on it (${shown.join(" -> ")}): every card of that loop would stay blocked for good`, {
          field: "target", value: target.id, hint: "remove a link of the loop first, or link the other way round",
        });
      }
    }
    const link: Link = { type_id: lt.id, target: target.id, ...(body.note !== undefined ? { note: body.note } : {}), created_by: ctx.actor, created_at: w.now };
    w.tx.addLink(id, link);
    const card = commitUpdate(w, cur, cur, [{ type: "link_added", diff: { type_id: lt.id, target: target.id, note: body.note ?? null } }]);
    blocks?.flush(w);
    return withParts(w.tx, card);
  });
}

/** How many cards a cycle check visits at most (a bound on one link's cost). */
const MAX_WAIT_WALK = 20_000;

/**
 * The chain of blocking links from `from` to `to` (both included), or undefined when
 * `to` cannot be reached: adding `to` -> `from` would then close a loop of cards each
 * waiting on the next. Breadth first, so the shortest chain is told.
 */
function waitPath(tx: StoreTx, from: string, to: string): string[] | undefined {
  const cameFrom = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let i = 0; i < queue.length && cameFrom.size <= MAX_WAIT_WALK; i++) {
    const at = queue[i]!;
    for (const l of tx.listLinks(at)) {
      if (!BLOCKING_LINK_TYPES.includes(l.type_id) || cameFrom.has(l.target)) continue;
      cameFrom.set(l.target, at);
      if (l.target === to) {
        const path = [to];
        for (let p = at; p !== null; p = cameFrom.get(p)!) path.unshift(p);
        return path;
      }
      queue.push(l.target);
    }
  }
  return undefined;
}

export async function removeLink(svc: Service, id: string, typeId: string, target: string, ctx: OpContext): Promise<Card> {
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
    const blocks = BLOCKING_LINK_TYPES.includes(typeId) ? new BlockWatch(w.tx).watch([id]) : undefined;
    if (!w.tx.removeLink(id, typeId, target)) {
      // a type the workspace does not declare and no link of it held: the type is the mistake
      // (a link of a type since taken out of workspace.json is still removed above)
      const types = svc.defs.workspace.link_types.map((t) => t.id);
      if (!types.includes(typeId) && !w.tx.listLinks(id).some((l) => l.type_id === typeId)) {
        throw new CardsError("validation_failed", `unknown link type ${JSON.stringify(typeId)}`, { field: "type_id", value: typeId, valid_options: types });
      }
      throw linkNotFound(w.tx, id, typeId, target);
    }
    const card = commitUpdate(w, cur, cur, [{ type: "link_removed", diff: { type_id: typeId, target } }]);
    blocks?.flush(w);
    return withParts(w.tx, card);
  });
}

/**
 * A link that is not on this card: it may live on the other card (a link lives on its
 * source, even a bidirectional one), so the hint names the call that removes it there;
 * else the links the card holds.
 */
function linkNotFound(tx: StoreTx, id: string, typeId: string, target: string): CardsError {
  // a target that is no card holds no links: the list is empty
  const reverse = tx.listLinks(target).some((l) => l.type_id === typeId && l.target === id);
  return new CardsError("not_found", `link ${JSON.stringify(`${typeId}/${target}`)} not found on ${id}`, {
    value: `${typeId}/${target}`,
    valid_options: tx.listLinks(id).map((l) => `${l.type_id}/${l.target}`),
    hint: reverse
      ? `the link is stored on ${target}, its source (a link lives on the card it was added to): remove it there: cards cards links remove ${target} ${typeId} ${id}; DELETE /cards/${target}/links/${typeId}/${id}; tools: remove_link {"card_id": "${target}", "type_id": "${typeId}", "target": "${id}"}`
      : "valid_options lists the links this card holds, as type_id/target (a link lives on the card it was added to)",
  });
}
