/** Comments: add and edit; each bumps the card version by one (DECISIONS). */
import { controlCharIn } from "../domain/text.ts";
import { CardsError, notFound } from "../domain/errors.ts";
import { newCommentId } from "../domain/ids.ts";
import type { Card, Comment } from "../domain/types.ts";
import { commitUpdate, loadForWrite, withParts } from "./cards.ts";
import { CommentBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

/** Comment body limit (DECISIONS size limits): 64 KiB. */
export const MAX_COMMENT_BYTES = 64 * 1024;
/**
 * A card's comments together (docs/limits.md): every read and write of the card returns
 * them all, so a card used as a chat log would make each call slower than the last.
 */
export const MAX_COMMENTS_PER_CARD = 5000;
export const MAX_COMMENT_CHARS_PER_CARD = 8 * 1024 * 1024;

export async function addComment(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<Card> {
  const text = commentText(input);
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
    const existing = w.tx.listComments(id);
    if (existing.length >= MAX_COMMENTS_PER_CARD) {
      throw new CardsError("validation_failed", `card ${id} has ${existing.length} comments, the most one card takes`, {
        field: "body", hint: "a card is one piece of work: go on in a new card linked to this one (cards cards links add), or sum up in one of its fields",
      });
    }
    assertCommentChars(id, existing.reduce((n, c) => n + c.body.length, 0) + text.length);
    const comment: Comment = { id: newCommentId(), author: ctx.actor, body: text, created_at: w.now };
    w.tx.addComment(id, comment);
    const card = commitUpdate(w, cur, cur, [{ type: "comment_added", diff: { comment_id: comment.id, body: text } }]);
    return withParts(w.tx, card);
  });
}

export async function editComment(svc: Service, id: string, commentId: string, input: unknown, ctx: OpContext): Promise<Card> {
  const text = commentText(input);
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
    const before = w.tx.getComment(id, commentId);
    if (!before) throw notFound("comment", commentId);
    if (before.body === text) return withParts(w.tx, cur);
    // only growth is refused: a card over the total (restored, or older) can still be redacted
    if (text.length > before.body.length) assertCommentChars(id, w.tx.listComments(id).reduce((n, c) => n + c.body.length, 0) - before.body.length + text.length);
    w.tx.updateComment(id, { ...before, body: text, edited_at: w.now });
    const card = commitUpdate(w, cur, cur, [{ type: "comment_edited", diff: { comment_id: commentId, before: before.body, after: text } }]);
    return withParts(w.tx, card);
  });
}

function assertCommentChars(id: string, total: number): void {
  if (total <= MAX_COMMENT_CHARS_PER_CARD) return;
  throw new CardsError("payload_too_large", `card ${id}'s comments would hold ${total} characters together, over ${MAX_COMMENT_CHARS_PER_CARD}`, {
    field: "body", hint: "go on in a new card linked to this one, or attach long text to an artifact field",
  });
}

function commentText(input: unknown): string {
  const { body } = parseShape(CommentBody, input, "comment");
  // zero-width characters show nothing either
  if (body.replace(/[\u200b-\u200d\u2060\ufeff]/g, "").trim() === "") throw new CardsError("validation_failed", "comment body is empty", { field: "body" });
  const control = controlCharIn(body, true);
  if (control) {
    throw new CardsError("validation_failed", `comment body holds a control character (${control}); tabs and line breaks are fine`, { field: "body" });
  }
  if (new TextEncoder().encode(body).byteLength > MAX_COMMENT_BYTES) {
    throw new CardsError("payload_too_large", `comment body over ${MAX_COMMENT_BYTES} bytes`, { field: "body", hint: "split it over several comments, or attach the text to an artifact field (cards cards artifacts put)" });
  }
  return body;
}
