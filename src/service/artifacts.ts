/**
 * Artifacts: POST /cards/{id}/artifacts/{field} stores raw bytes content-addressed
 * (SHA-256, deduplicated, type from Content-Type or sniffed) and sets the artifact
 * field's metadata {uri, mime, size, sha256}; GET /artifacts/{path} reads them back.
 * Only `sha256/<2 hex>/<64 hex>` names a blob: every other path, traversal included, is 404.
 */
import { CardsError, notFound } from "../domain/errors.ts";
import { hash128 } from "../domain/hash.ts";
import { LOCAL_ARTIFACT_PREFIX, localArtifactUri, storesBytes } from "../domain/fields.ts";
import { declaredMediaType } from "../domain/media-type.ts";
import { servedMime, sniffMime } from "../domain/sniff.ts";
import type { Card } from "../domain/types.ts";
import { commitUpdate, loadForWrite, withParts } from "./cards.ts";
import type { OpContext, Service } from "./service.ts";

import { MAX_ARTIFACT_BYTES } from "../domain/limits.ts";

export { MAX_ARTIFACT_BYTES, servedMime };
const BLOB_PATH = /^sha256\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

export async function attachArtifact(
  svc: Service, id: string, field: string, body: AsyncIterable<Uint8Array> | Uint8Array, contentType: string | undefined, ctx: OpContext,
): Promise<Card> {
  const before = svc.store.getCard(id);
  if (!before) throw notFound("card", id);
  const type = svc.cardType(before.type_id);
  const def = type.fields.find((f) => f.id === field);
  const artifactFields = type.fields.filter((f) => f.type === "artifact").map((f) => f.id);
  if (!def || def.type !== "artifact") {
    // a type with none: say which types take files, not an empty list
    const elsewhere = [...svc.defs.cardTypes.values()].flatMap((t) => t.fields.filter(storesBytes).map((f) => `${t.id}.${f.id}`));
    throw new CardsError("validation_failed", `${field} is not an artifact field of ${type.id}`, {
      field, value: field, valid_options: artifactFields,
      ...(artifactFields.length === 0 ? { hint: `card type ${type.id} has no artifact field${elsewhere.length ? `; file fields: ${elsewhere.join(", ")}` : ""}: keep a link or text in one of its fields instead` } : {}),
    });
  }
  if (!storesBytes(def)) {
    throw new CardsError("validation_failed", `${field} holds an external URI (artifact_policy uri); it stores no bytes`, {
      field, hint: `set it as a field value with an update: PATCH /cards/${id} {"fields": {"${field}": {"uri": "https://..."}}}; CLI: cards cards patch ${id} --version N --fields '{"${field}": {"uri": "https://..."}}'; tools: update_${type.id}`,
    });
  }
  const declared = declaredMediaType(contentType);
  const blob = await svc.blobs.put(body, MAX_ARTIFACT_BYTES, (head) => declared ?? sniffMime(head));
  // the same bytes are stored once, with the type of their first upload; this card's
  // field records the type this upload declared
  const meta = { uri: localArtifactUri(blob.sha256), mime: declared ?? blob.mime, size: blob.size, sha256: blob.sha256 };
  // the bytes streamed past the request's hash (it covers the JSON bodies): a repeat of the
  // key with other bytes or another type is another request (422), not a replay
  if (ctx.idempotency) ctx.idempotency.hash = hash128(`${ctx.idempotency.hash}\nsha256:${blob.sha256}\ntype:${declared ?? ""}`);
  try {
    return await svc.mutate(ctx, (w) => {
      // bytes an artifacts gc removed since the upload are put back under the write lock
      blob.hold.ensure();
      const cur = loadForWrite(w.tx, id, undefined);
      // the same bytes with the same type again change nothing: no version, no event
      if (JSON.stringify(cur.fields[field]) === JSON.stringify(meta)) return withParts(w.tx, cur);
      const card = commitUpdate(w, cur, { ...cur, fields: { ...cur.fields, [field]: meta } }, [{ type: "artifact_added", diff: { field, ...meta } }], svc);
      return withParts(w.tx, card);
    });
  } finally {
    blob.hold.release();
  }
}

/** Opens a stored artifact by its path under /artifacts/ (or its full `artifacts/...` uri). */
export async function openArtifact(svc: Service, path: string): Promise<{ body: ReadableStream<Uint8Array>; mime: string; size: number }> {
  const rel = path.startsWith(LOCAL_ARTIFACT_PREFIX) ? path.slice("artifacts/".length) : path.replace(/^\/+/, "");
  const m = BLOB_PATH.exec(rel);
  if (!m || !m[2]!.startsWith(m[1]!)) {
    // an external uri (an artifact_policy uri field) names no stored bytes: say so
    if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
      throw new CardsError("not_found", `artifact ${JSON.stringify(path)} not found: only ${LOCAL_ARTIFACT_PREFIX}... uris name stored bytes`, {
        value: path, hint: "an external uri (a field with artifact_policy uri) stores no bytes here: fetch it where it points",
      });
    }
    throw notFound("artifact", path);
  }
  const blob = await svc.blobs.get(m[2]!);
  if (!blob) throw notFound("artifact", path);
  return blob;
}

/** The whole artifact in memory (the tool server returns it base64-encoded). */
export async function readArtifact(svc: Service, uri: string): Promise<{ bytes: Uint8Array; mime: string; size: number }> {
  const a = await openArtifact(svc, uri);
  const bytes = new Uint8Array(await new Response(a.body).arrayBuffer());
  return { bytes, mime: a.mime, size: a.size };
}

/** Unreferenced blobs younger than this are kept: an upload stores its bytes before its card write commits. */
export const ARTIFACT_GC_GRACE_MS = 60 * 60 * 1000;

export interface ArtifactCollection { removed: number; removed_bytes: number; kept: number; dry_run: boolean }

/**
 * Removes the stored blobs no card and no event refers to (`cards artifacts gc`): the
 * bytes of uploads whose card write was refused (a stale version, a card deleted
 * meanwhile, an Idempotency-Key reused with other bytes, a full disk). The history keeps
 * what it names: an artifact a card no longer holds, or a deleted card held, stays
 * downloadable through its events' uris. Blobs stored within `graceMs` are kept, since an
 * upload stores its bytes before its card write commits.
 */
export async function collectArtifacts(svc: Service, o: { dryRun?: boolean; graceMs?: number } = {}): Promise<ArtifactCollection> {
  const referenced = new Set<string>();
  const scan = (text: string): void => {
    for (const m of text.matchAll(/sha256\/[0-9a-f]{2}\/([0-9a-f]{64})/g)) referenced.add(m[1]!);
  };
  const scanned = svc.store.lastEventId() ?? undefined;
  for (const c of svc.store.iterateCards()) scan(JSON.stringify(c.fields));
  for (const e of svc.store.iterateEvents()) scan(JSON.stringify(e.diff));
  const storedBefore = Date.now() - (o.graceMs ?? ARTIFACT_GC_GRACE_MS);
  const out: ArtifactCollection = { removed: 0, removed_bytes: 0, kept: 0, dry_run: o.dryRun === true };
  const candidates: Array<{ sha256: string; size: number }> = [];
  for await (const b of svc.blobs.list()) {
    if (referenced.has(b.sha256) || b.storedAt >= storedBefore) out.kept++;
    else candidates.push(b);
  }
  if (o.dryRun || candidates.length === 0) {
    out.removed = candidates.length;
    for (const b of candidates) out.removed_bytes += b.size;
    return out;
  }
  // Under the write lock: a card write that named one of them since the scan has its
  // event (an upload's bytes are put back in its own transaction: BlobHold.ensure)
  await svc.store.write((tx) => {
    for (let after = scanned; ;) {
      const page = tx.listEvents({ afterId: after, limit: 500 });
      for (const e of page) scan(JSON.stringify(e.diff));
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
    for (const b of candidates) {
      if (!referenced.has(b.sha256) && svc.blobs.remove(b.sha256, storedBefore)) {
        out.removed++;
        out.removed_bytes += b.size;
      } else {
        out.kept++;
      }
    }
  });
  return out;
}