/**
 * A card's comments and links are bounded (docs/limits.md): every read and write of the
 * card returns them all. The cards are filled through the Store port, then the service's
 * next add is the one that must be refused, naming what to do instead.
 */
import { expect, test } from "bun:test";
import { addComment, addLink, createCard, editComment, getCard } from "../../src/service/index.ts";
import { MAX_COMMENT_BYTES, MAX_COMMENT_CHARS_PER_CARD, MAX_COMMENTS_PER_CARD } from "../../src/service/comments.ts";
import { MAX_LINKS_PER_CARD } from "../../src/service/links.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const as = (actor: string) => ({ actor }) as never;
const err = async (p: Promise<unknown>) => p.then(() => undefined, (e) => e);

test(`a card takes ${MAX_COMMENTS_PER_CARD} comments; the next is refused and nothing is written`, async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const card = await createCard(svc, { type_id: "task", title: "chatty" }, as("ada"));
    await svc.store.write((tx) => {
      for (let i = 0; i < MAX_COMMENTS_PER_CARD - 1; i++) tx.addComment(card.id, { id: `cmt_${String(i).padStart(16, "0")}`, author: "ada", body: "progress", created_at: new Date().toISOString() });
    });
    const last = await addComment(svc, card.id, { body: "the last one" }, as("ada"));
    expect(last.comments).toHaveLength(MAX_COMMENTS_PER_CARD);
    const e = await err(addComment(svc, card.id, { body: "one more" }, as("ada")));
    expect(e).toMatchObject({ code: "validation_failed", message: expect.stringContaining(`has ${MAX_COMMENTS_PER_CARD} comments`) });
    expect(e.extra.hint).toContain("new card linked to this one");
    const after = getCard(svc, card.id);
    expect([after.version, after.comments?.length]).toEqual([last.version, MAX_COMMENTS_PER_CARD]);
  } finally {
    svc.close();
  }
});

test("a card's comments together hold at most 8 Mi characters, on add and on edit (413)", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const card = await createCard(svc, { type_id: "task", title: "long" }, as("ada"));
    const body = "x".repeat(MAX_COMMENT_BYTES);
    const n = MAX_COMMENT_CHARS_PER_CARD / MAX_COMMENT_BYTES - 1;
    await svc.store.write((tx) => {
      for (let i = 0; i < n; i++) tx.addComment(card.id, { id: `cmt_${String(i).padStart(16, "0")}`, author: "ada", body, created_at: new Date().toISOString() });
    });
    await addComment(svc, card.id, { body: "pad" }, as("ada"));
    const short = await addComment(svc, card.id, { body: "short" }, as("ada"));
    const mine = short.comments!.find((c) => c.body === "short")!;
    // growing that comment to 64 KiB would pass the total by the 3 characters of "pad"
    expect(await err(editComment(svc, card.id, mine.id, { body }, as("ada")))).toMatchObject({ code: "payload_too_large" });
    expect(await err(addComment(svc, card.id, { body }, as("ada")))).toMatchObject({ code: "payload_too_large", message: expect.stringContaining("characters together") });
    expect((await editComment(svc, card.id, mine.id, { body: "x".repeat(MAX_COMMENT_BYTES - 3) }, as("ada"))).comments).toHaveLength(n + 2);
  } finally {
    svc.close();
  }
});

test(`a card holds ${MAX_LINKS_PER_CARD} links; the next is refused, adding one it has is still a no-op`, async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const hub = await createCard(svc, { type_id: "task", title: "hub" }, as("ada"));
    const targets: string[] = [];
    for (let i = 0; i <= MAX_LINKS_PER_CARD; i++) targets.push((await createCard(svc, { type_id: "task", title: `t${i}` }, as("ada"))).id);
    await svc.store.write((tx) => {
      for (const t of targets.slice(0, MAX_LINKS_PER_CARD)) tx.addLink(hub.id, { type_id: "related", target: t, created_by: "ada", created_at: new Date().toISOString() });
    });
    const again = await addLink(svc, hub.id, { type_id: "related", target: targets[0] }, as("ada"));
    expect(again.links).toHaveLength(MAX_LINKS_PER_CARD);
    const e = await err(addLink(svc, hub.id, { type_id: "related", target: targets[MAX_LINKS_PER_CARD] }, as("ada")));
    expect(e).toMatchObject({ code: "validation_failed", message: expect.stringContaining(`has ${MAX_LINKS_PER_CARD} links`) });
  } finally {
    svc.close();
  }
});

test("a card already over the comment total (restored, or older) can still have a comment shortened", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const card = await createCard(svc, { type_id: "task", title: "over" }, as("ada"));
    const body = "x".repeat(MAX_COMMENT_BYTES);
    await svc.store.write((tx) => {
      for (let i = 0; i < 130; i++) tx.addComment(card.id, { id: `cmt_${String(i).padStart(16, "0")}`, author: "ada", body, created_at: new Date().toISOString() });
    });
    const redacted = await editComment(svc, card.id, `cmt_${"0".repeat(16)}`, { body: "redacted" }, as("ada"));
    expect(redacted.comments!.find((c) => c.id === `cmt_${"0".repeat(16)}`)?.body).toBe("redacted");
  } finally {
    svc.close();
  }
});
