/**
 * artifacts gc and uploads of the same bytes: an upload whose bytes were already stored
 * keeps a spare copy until its card write is done, so a collection that removes the blob
 * in between cannot leave the card naming bytes that are gone.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { attachArtifact, collectArtifacts, createCard, patchCard, readArtifact } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;
const bytes = (s: string) => new TextEncoder().encode(s);

test("bytes removed between an upload and its card write are put back by the write", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    // an orphan from long ago (a refused upload)
    const first = await svc.blobs.put(bytes("same bytes"), 1024, () => "text/plain");
    first.hold.release();
    const blobPath = join(dir, ".cards", "artifacts", "sha256", first.sha256.slice(0, 2), first.sha256);
    const long = new Date(Date.now() - 2 * 3600_000);
    utimesSync(blobPath, long, long);
    // an upload of the same bytes finds them stored; a gc removes them before the card write
    const again = await svc.blobs.put(bytes("same bytes"), 1024, () => "text/plain");
    expect(svc.blobs.remove(again.sha256, Date.now() + 1)).toBe(true);
    expect(existsSync(blobPath)).toBe(false);
    again.hold.ensure(); // inside the card write's transaction
    again.hold.release();
    expect(readFileSync(blobPath, "utf8")).toBe("same bytes"); // before: gone for good, the card's uri 404
    expect(readFileSync(`${blobPath}.type`, "utf8")).toBe("text/plain");
  } finally {
    svc.close();
  }
});

test("bytes stored for the first time are put back too when a gc removes them before the card write", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    const fresh = await svc.blobs.put(bytes("new bytes"), 1024, () => "text/plain");
    const blobPath = join(dir, ".cards", "artifacts", "sha256", fresh.sha256.slice(0, 2), fresh.sha256);
    expect(svc.blobs.remove(fresh.sha256, Date.now() + 1)).toBe(true); // a gc with --grace 0
    fresh.hold.ensure();
    fresh.hold.release();
    expect(readFileSync(blobPath, "utf8")).toBe("new bytes"); // before: only re-stored bytes had a spare
  } finally {
    svc.close();
  }
});

test("gc keeps what cards and history name and what is younger than the grace; removes the rest", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    const card = await createCard(svc, { type_id: "task", title: "with output" }, ada);
    const kept = await attachArtifact(svc, card.id, "output", bytes("kept"), "text/plain", ada);
    const orphan = await svc.blobs.put(bytes("orphan"), 1024, () => "text/plain");
    orphan.hold.release();
    expect(await collectArtifacts(svc)).toEqual({ removed: 0, removed_bytes: 0, kept: 2, dry_run: false });
    expect(await collectArtifacts(svc, { graceMs: 0, dryRun: true })).toEqual({ removed: 1, removed_bytes: 6, kept: 1, dry_run: true });
    expect(await collectArtifacts(svc, { graceMs: 0 })).toEqual({ removed: 1, removed_bytes: 6, kept: 1, dry_run: false });
    expect(await svc.blobs.has(orphan.sha256)).toBe(false);
    expect(new TextDecoder().decode((await readArtifact(svc, (kept.fields.output as { uri: string }).uri)).bytes)).toBe("kept");
    // no spare copies are left in the temp folder
    expect(existsSync(join(dir, ".cards", "artifacts", "tmp")) ? require("node:fs").readdirSync(join(dir, ".cards", "artifacts", "tmp")) : []).toEqual([]);
  } finally {
    svc.close();
  }
});

/**
 * A card write that names stored bytes checks them under the write lock: a gc holding the
 * lock (here a child process standing in for it) that removes them before the write gets
 * the lock leaves the write refused, not a card naming bytes that are gone.
 */
async function whileLockedRemoving(dir: string, blobPath: string, write: () => Promise<unknown>): Promise<unknown> {
  const child = Bun.spawn([process.execPath, "-e", `
    const { Database } = require("bun:sqlite");
    const db = new Database(${JSON.stringify(join(dir, ".cards", "cards.db"))});
    db.exec("BEGIN IMMEDIATE");
    console.log("locked");
    await Bun.sleep(600);
    require("node:fs").unlinkSync(${JSON.stringify(blobPath)});
    db.exec("COMMIT");
    db.close();
  `], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain("locked");
  const outcome = await write().then((v) => v, (e) => e);
  await child.exited;
  return outcome;
}

test("a card write naming stored bytes that a gc removes while the write waits for the lock is refused", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "embedded");
  try {
    const orphan = await svc.blobs.put(bytes("orphan bytes"), 1024, () => "text/plain");
    orphan.hold.release();
    const uri = `artifacts/sha256/${orphan.sha256.slice(0, 2)}/${orphan.sha256}`;
    const blobPath = join(dir, ".cards", "artifacts", "sha256", orphan.sha256.slice(0, 2), orphan.sha256);
    const created = await whileLockedRemoving(dir, blobPath, () => createCard(svc, { type_id: "task", title: "names gone bytes", fields: { output: { uri } } }, ada));
    // before: the card was created naming bytes that were gone (its uri answered 404)
    expect((created as { code?: string }).code).toBe("validation_failed");
    expect((created as Error).message).toContain("is not in the workspace artifact store");

    const again = await svc.blobs.put(bytes("orphan bytes"), 1024, () => "text/plain");
    again.hold.release();
    const card = await createCard(svc, { type_id: "task", title: "plain" }, ada);
    const patched = await whileLockedRemoving(dir, blobPath, () => patchCard(svc, card.id, { version: card.version, fields: { output: { uri } } }, ada));
    expect((patched as { code?: string }).code).toBe("validation_failed");
    expect(svc.store.getCard(card.id)?.fields.output).toBeUndefined();
  } finally {
    svc.close();
  }
});
