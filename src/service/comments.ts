/** Comments: add and edit; each bumps the card version by one (DECISIONS). */
import { CardsError, notFound } from "../domain/errors.ts";
import { newCommentId } from "../domain/ids.ts";
import type { Card, Comment } from "../domain/types.ts";
import { commitUpdate, loadForWrite, withParts } from "./cards.ts";
import { CommentBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

/** Comment body limit (DECISIONS size limits): 64 KiB. */
export const MAX_COMMENT_BYTES = 64 * 1024;

export async function addComment(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<Card> {
  const text = commentText(input);
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
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
    w.tx.updateComment(id, { ...before, body: text, edited_at: w.now });
    const card = commitUpdate(w, cur, cur, [{ type: "comment_edited", diff: { comment_id: commentId, before: before.body, after: text } }]);
    return withParts(w.tx, card);
  });
}

function commentText(input: unknown): string {
  const { body } = parseShape(CommentBody, input, "comment");
  if (body.trim() === "") throw new CardsError("validation_failed", "comment body is empty", { field: "body" });
  if (new TextEncoder().encode(body).byteLength > MAX_COMMENT_BYTES) {
    throw new CardsError("payload_too_large", `comment body over ${MAX_COMMENT_BYTES} bytes`, { field: "body", hint: "split it over several comments, or attach the text to an artifact field (cards cards artifacts put)" });
  }
  return body;
}
