/**
 * The card face on a lane: type icon, short id, blocked badge, "stuck" and "idle" badges
 * (board monitors), title, the board's card_preview fields, tags and owner. The style_field's option theme colours the card.
 */
import { breachBadges, describeBreach } from "./breaches.ts";
import { h, shortId } from "./dom.ts";
import { icon } from "./icons.ts";
import { isEmpty, label, renderValue, userChip } from "./fields.ts";
import { cardType, fieldDef, state, userName } from "./state.ts";
import type { Card } from "./types.ts";

/** The colour of a card from the board's style_field, if its value has a themed colour. */
export function styleColor(card: Card): string | undefined {
  const id = state.board.presentation?.style_field;
  if (!id) return undefined;
  const def = fieldDef(card.type_id, id);
  const v = card.fields[id];
  if (!def || def.type !== "enum" || isEmpty(v)) return undefined;
  const first = Array.isArray(v) ? String(v[0]) : String(v);
  return def.option_themes?.[first]?.color;
}

export function cardFace(card: Card, blocked: boolean): HTMLElement {
  const type = cardType(card.type_id);
  const preview = (state.board.presentation?.card_preview?.[card.type_id] ?? [])
    .map((id) => fieldDef(card.type_id, id))
    .filter((d) => d && d.display !== "hidden" && !isEmpty(card.fields[d.id]));
  const breaches = (state.cardBreaches.get(card.id) ?? []).map(describeBreach);
  const previews = preview.map((d) =>
    h("span", { class: `pv t-${d!.type}`, title: d!.label ?? d!.id }, renderValue(d!, card.fields[d!.id], "face")));
  // a div: role=listitem is not allowed on an <article>
  const el = h("div", {
    class: `card${blocked ? " is-blocked" : ""}`,
    "data-id": card.id,
    "data-status": card.status,
    tabindex: "-1",
    role: "listitem",
    "aria-roledescription": "card",
    "aria-label": "",
  },
  h("div", { class: "card-top" },
    icon(type?.icon, type?.name ?? card.type_id),
    h("span", { class: "short-id mono", title: card.id }, shortId(card.id)),
    // no comment count: board lists carry no comments, so a count would come and go
    blocked ? h("span", { class: "blocked-badge", title: "blocked by an unfinished dependency" }, "blocked") : null,
    breachBadges(card.id)),
  h("h3", { class: "card-title" }, card.title),
  preview.length ? h("div", { class: "card-preview" }, previews) : null,
  card.tags.length || card.owner ? h("div", { class: "card-meta" },
    card.tags.length ? h("span", { class: "tags" }, card.tags.map((t) => h("span", { class: "tag" }, t))) : null,
    card.owner ? h("span", { class: "owner" }, userChip(card.owner)) : null) : null);
  // the name says what the face shows, in its order: a screen reader hears the card as a sighted person sees it
  el.setAttribute("aria-label", [
    card.title, shortId(card.id), blocked ? "blocked" : "", ...breaches,
    ...preview.map((d, i) => `${label(d!)}: ${spoken(previews[i]!)}`),
    card.tags.length ? `tags: ${card.tags.join(", ")}` : "",
    card.owner ? `owner: ${userName(card.owner)}` : "",
  ].filter(Boolean).join(", "));
  const color = styleColor(card);
  if (color) {
    el.style.setProperty("--card-color", color);
    el.classList.add("styled");
  }
  return el;
}

/** The words of a rendered value, as read out: hidden parts (avatars' initials) left out, pills apart. */
function spoken(el: Element): string {
  const words: string[] = [];
  const walk = (n: Node): void => {
    if (n instanceof Element && n.getAttribute("aria-hidden") === "true") return;
    if (n.nodeType === Node.TEXT_NODE) { const t = n.textContent?.trim(); if (t) words.push(t); return; }
    n.childNodes.forEach(walk);
  };
  walk(el);
  return words.join(", ");
}
