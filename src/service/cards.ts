/**
 * Card operations: create, get, patch, delete. Every rule of SPEC "Card" and
 * "States and transitions" that concerns these writes lives here or in domain/.
 */
import { CardsError, isCardsError, notFound, shortIdHint, unknownUser, versionConflict } from "../domain/errors.ts";
import { canonicalCard } from "../domain/card.ts";
import { ME, newCardId, newEntryId } from "../domain/ids.ts";
import { localArtifactRefs, validateFields, validateTags, validateTitle, type ArtifactRef } from "../domain/fields.ts";
import { assertStatusAllowed, assertTransition } from "../domain/transitions.ts";
import { governingBoard } from "../domain/moves.ts";
import type { Board, Card, CardEvent, CardType } from "../domain/types.ts";
import type { StoreReads, StoreTx } from "../store/port.ts";
import { BlockWatch } from "./blocking.ts";
import { LaneWatch } from "./lanes.ts";
import { CreateCardBody, PatchCardBody, parseShape } from "./shapes.ts";
import type { OpContext, Service, WriteScope } from "./service.ts";

export async function createCard(svc: Service, input: unknown, ctx: OpContext): Promise<Card> {
  if (input && typeof input === "object" && "owner" in input) {
    throw new CardsError("validation_failed", "owner cannot be set at create", {
      field: "owner", hint: "create the card, then claim it (POST /cards/{id}/claim) or PATCH its owner",
    });
  }
  const body = parseShape(CreateCardBody, input, "create card", (k) => fieldKeyHint(svc, k));
  const { workspace } = svc.defs;
  const type = svc.cardType(body.type_id);
  if (body.schema_version !== undefined && body.schema_version !== type.schema_version) {
    throw new CardsError("schema_version_mismatch", `card type ${type.id} is at schema_version ${type.schema_version}`, {
      field: "schema_version", value: body.schema_version, valid_options: [type.schema_version],
    });
  }
  const title = validateTitle(body.title);
  const tags = body.tags === undefined ? [] : validateTags(body.tags, workspace.settings, workspace.tag_set);
  const status = body.status !== undefined
    ? assertStatusAllowed(workspace, type, body.status)
    : (type.allowed_columns?.[0] ?? workspace.columns[0]!.id);
  const { fields, refs } = validateFields({
    type, settings: workspace.settings, tagSet: workspace.tag_set, fields: body.fields ?? {}, mode: "create", makeEntryId: newEntryId, actor: ctx.actor,
  });
  const artifacts = localArtifactRefs(type.fields, fields);
  return svc.mutate(ctx, (w) => {
    assertArtifactsStored(svc, artifacts);
    assertCardRefs(w.tx, refs.cards);
    const card = canonicalCard({
      id: newCardId(), workspace_id: workspace.id, type_id: type.id, schema_version: type.schema_version,
      title, status, fields, tags, version: 1,
      created_at: w.now, updated_at: w.now, status_since: w.now, created_by: ctx.actor,
    });
    const lanes = new LaneWatch(svc, w.tx).watch([status]);
    w.tx.insertCard(card);
    w.emit({ type: "card_created", card_id: card.id, diff: { card } });
    lanes.flush(w);
    return canonicalCard({ ...card, links: [], comments: [] });
  }, { dryRun: body.dry_run });
}

/** For an unknown top-level key that is a field of some card type: it belongs inside `fields`. */
function fieldKeyHint(svc: Service, key: string): string | undefined {
  const types = [...svc.defs.cardTypes.values()].filter((t) => t.fields.some((f) => f.id === key)).map((t) => t.id);
  if (types.length === 0) return undefined;
  return `${key} is a field (of ${types.join(", ")}): send it inside fields, as {"fields": {${JSON.stringify(key)}: ...}} (CLI: --fields '{"${key}": ...}')`;
}

export async function patchCard(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<Card> {
  const body = parseShape(PatchCardBody, input, "patch card", (k) => fieldKeyHint(svc, k));
  const { workspace } = svc.defs;
  let refused: { board: Board; from: string; to: string } | undefined;
  try {
    return await patchInTransaction();
  } catch (e) {
    // a dry run previews the refusal: nothing is recorded, not even the signal
    if (!body.dry_run && refused?.board.monitors?.emit_rejections && isCardsError(e) && e.code === "transition_illegal") {
      await svc.signal(ctx, {
        type: "transition_rejected", card_id: id,
        diff: { board_id: refused.board.id, before: refused.from, after: refused.to, valid_options: e.extra.valid_options ?? [] },
      });
    }
    throw e;
  }

  function patchInTransaction(): Promise<Card> {
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, body.version);
    const type = svc.cardType(cur.type_id);
    const next: Card = { ...cur };
    const events: Array<Pick<CardEvent, "type" | "diff">> = [];

    if (body.title !== undefined) {
      const title = validateTitle(body.title);
      if (title !== cur.title) {
        next.title = title;
        events.push({ type: "field_updated", diff: { field: "title", before: cur.title, after: title } });
      }
    }
    if (body.fields !== undefined) {
      const { fields, refs } = validateFields({
        type, settings: workspace.settings, tagSet: workspace.tag_set, fields: body.fields, mode: "patch",
        existing: cur.fields, makeEntryId: newEntryId, actor: ctx.actor,
      });
      assertCardRefs(w.tx, refs.cards);
      // the bytes a local artifact uri names must be stored; a value sent back unchanged
      // is not checked again (a card restored without its bytes)
      assertArtifactsStored(svc, localArtifactRefs(type.fields, body.fields).filter((r) => (cur.fields[r.field] as { uri?: unknown } | undefined)?.uri !== r.uri));
      for (const key of unionKeys(cur.fields, fields)) {
        if (!sameJson(cur.fields[key], fields[key])) {
          events.push({ type: "field_updated", diff: { field: key, before: cur.fields[key] ?? null, after: fields[key] ?? null } });
        }
      }
      next.fields = fields;
    }
    if (body.tags !== undefined) {
      const tags = validateTags(body.tags, workspace.settings, workspace.tag_set);
      if (!sameJson(tags, cur.tags)) {
        next.tags = tags;
        events.push({ type: "tags_changed", diff: { before: cur.tags, after: tags } });
      }
    }
    if (body.owner !== undefined) {
      // "me" names the caller, as in filters
      const owner = body.owner === ME ? ctx.actor : body.owner || undefined;
      if (owner && !w.tx.getUser(owner)) throw unknownUser("owner", owner);
      if (owner !== cur.owner) {
        next.owner = owner;
        events.push({ type: "owner_changed", diff: { before: cur.owner ?? null, after: owner ?? null } });
      }
    }
    if (body.status !== undefined) {
      const status = assertStatusAllowed(workspace, type, body.status);
      if (status !== cur.status) {
        const board = boardFor(svc, type);
        if (board) refused = { board, from: cur.status, to: status };
        assertTransition(workspace, board, type, cur.status, status, body.force === true);
        refused = undefined;
        next.status = status;
        next.status_since = w.now;
        events.push({ type: "status_changed", diff: { before: cur.status, after: status } });
      }
    }
    if (events.length === 0) return withParts(w.tx, cur);
    return withParts(w.tx, commitUpdate(w, cur, next, events, svc));
  }, { dryRun: body.dry_run });
  }
}

export async function deleteCard(svc: Service, id: string, version: number | undefined, ctx: OpContext): Promise<Card> {
  return svc.mutate(ctx, (w) => {
    const cur = w.tx.getCard(id, { links: true, comments: true });
    if (!cur) throw notFound("card", id);
    if (version !== undefined && version !== cur.version) throw versionConflict(cur);
    const blocks = new BlockWatch(w.tx).watchDependentsOf(id);
    const lanes = new LaneWatch(svc, w.tx).watch([cur.status]);
    w.tx.deleteCard(id);
    w.emit({ type: "card_deleted", card_id: id, diff: { card: cur } });
    blocks.flush(w);
    lanes.flush(w);
    return cur;
  });
}

// --- shared by every card write ---

/** The card as every write answers it: with its links and comments, like GET. */
export function withParts(r: StoreReads, card: Card): Card {
  // one statement reads the stored card with both parts (cheaper than two part queries)
  return r.getCard(card.id, { links: true, comments: true }) ?? canonicalCard({ ...card, links: [], comments: [] });
}

/** Reads the card inside the transaction and checks the version guard. */
export function loadForWrite(tx: StoreTx, id: string, version: number | undefined): Card {
  const cur = tx.getCard(id);
  if (!cur) throw notFound("card", id);
  // a conflict carries the card as a read answers it (links and comments), like every write
  if (version !== undefined && cur.version !== version) throw versionConflict(withParts(tx, cur));
  return cur;
}

/**
 * A card's fields as stored, at most this many characters of JSON (4 Mi). One request
 * is at most 1 MiB, but appends add up, and every write rewrites the whole card.
 */
export const MAX_CARD_FIELDS_CHARS = 4 * 1024 * 1024;

const overCap = (fields: Card["fields"]): boolean => JSON.stringify(fields).length > MAX_CARD_FIELDS_CHARS;

/** Bumps version and updated_at once, stores the card and appends its events. */
export function commitUpdate(w: WriteScope, cur: Card, next: Card, events: Array<Pick<CardEvent, "type" | "diff">>, svc?: Service): Card {
  // only growth past the cap is refused: a card already over it (restored, or older) can shrink
  if (next.fields !== cur.fields && overCap(next.fields) && JSON.stringify(next.fields).length > JSON.stringify(cur.fields).length) {
    throw new CardsError("payload_too_large", `card ${cur.id} would hold more than ${MAX_CARD_FIELDS_CHARS} characters of fields`, {
      hint: "keep large content in artifacts (CLI: cards cards artifacts put ID FIELD FILE; HTTP: POST /cards/{id}/artifacts/{field}; tools: attach_artifact); remove entries or fields you no longer need",
    });
  }
  const card = canonicalCard({ ...next, version: cur.version + 1, updated_at: w.now, links: undefined, comments: undefined });
  const blocks = card.status !== cur.status ? new BlockWatch(w.tx).watchDependentsOf(cur.id) : undefined;
  const lanes = svc ? new LaneWatch(svc, w.tx).watch(new Set([cur.status, card.status]), card.status !== cur.status) : undefined;
  if (!w.tx.updateCard(card, cur.version)) throw versionConflict(withParts(w.tx, w.tx.getCard(cur.id) ?? cur));
  for (const e of events) w.emit({ type: e.type, card_id: card.id, diff: e.diff });
  blocks?.flush(w);
  lanes?.flush(w);
  return card;
}

/**
 * Every local artifact uri must name bytes in the workspace artifact store (SPEC: it must
 * resolve there). Called inside the write's transaction: artifacts gc removes under the
 * same lock, so the bytes checked here are still there when the card commits.
 */
export function assertArtifactsStored(svc: Service, refs: readonly ArtifactRef[]): void {
  for (const ref of refs) {
    if (svc.blobs.has(ref.sha256)) continue;
    // uploads go to a card's top-level artifact field; an entry's file reuses such a uri
    const how = ref.item
      ? "upload the bytes into a top-level artifact field of any card first (POST /cards/{id}/artifacts/{field}; CLI: cards cards artifacts put; tools: attach_artifact), then use the uri it answers with"
      : "upload the bytes first with POST /cards/{id}/artifacts/{field} (CLI: cards cards artifacts put; tools: attach_artifact): it stores them, sets that field and answers with their uri";
    throw new CardsError("validation_failed", `${ref.field}: ${ref.uri} is not in the workspace artifact store`, { field: `${ref.field}.uri`, value: ref.uri, hint: how });
  }
}

/** card_link values must name an existing card of the declared target type. */
export function assertCardRefs(tx: StoreTx, refs: Array<{ field: string; id: string; target_type?: string }>): void {
  for (const ref of refs) {
    const target = tx.getCard(ref.id);
    if (!target) {
      throw new CardsError("target_card_missing", `${ref.field}: card ${ref.id} does not exist`, { field: ref.field, value: ref.id, ...shortIdHint(ref.id) });
    }
    if (ref.target_type && target.type_id !== ref.target_type) {
      throw new CardsError("target_card_type_mismatch", `${ref.field}: card ${ref.id} is a ${target.type_id}, not a ${ref.target_type}`, {
        field: ref.field, value: ref.id, valid_options: [ref.target_type],
      });
    }
  }
}

export function boardFor(svc: Service, type: CardType) {
  return governingBoard(svc.defs.boards, svc.defs.defaultBoardId, type.id);
}

function unionKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])];
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
