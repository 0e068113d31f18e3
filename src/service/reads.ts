/** Single-card reads, kept apart from the write rules so a read loads little code. */
import { notFound } from "../domain/errors.ts";
import type { Card } from "../domain/types.ts";
import type { Service } from "./service.ts";

export function getCard(svc: Service, id: string): Card {
  const card = svc.store.getCard(id, { links: true, comments: true });
  if (!card) throw notFound("card", id);
  return card;
}
