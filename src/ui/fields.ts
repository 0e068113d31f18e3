/**
 * Field values rendered by type and `display` (feed, badge, hidden, link, monospace), for
 * the card face ("face": short) and the detail panel ("detail": complete).
 */
import { leading, trailing } from "../domain/codepoints.ts";
import { h, fmtDate, fmtTime, fmtBytes, shortId, type Child } from "./dom.ts";
import { icon } from "./icons.ts";
import { markdown } from "./markdown.ts";
import { state, userName } from "./state.ts";
import type { FieldDef } from "./types.ts";

export type Mode = "face" | "detail";

export function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);
}

export function label(def: FieldDef): string {
  return def.label || def.id;
}

/** A pill for an enum option, coloured and marked with its option theme. */
export function optionBadge(def: FieldDef, value: string): HTMLElement {
  const theme = def.option_themes?.[value];
  const el = h("span", { class: "badge", "data-value": value }, theme?.icon ? icon(theme.icon) : null, value);
  if (theme?.color) el.style.setProperty("--badge", theme.color);
  return el;
}

export function userChip(id: string): HTMLElement {
  // whole code points: a name starting with an emoji showed half of it
  const initials = leading(userName(id).split(/[\s_-]+/).map((w) => [...w][0] ?? "").join(""), 2).toUpperCase();
  return h("span", { class: "user", title: id }, h("span", { class: "avatar", "aria-hidden": "true" }, initials), userName(id));
}

export function cardRef(id: string): HTMLElement {
  const known = state.cards.get(id);
  return h("a", { class: "card-ref", href: `?${new URLSearchParams({ board: state.board.id, card: id })}`, "data-open": id, title: id },
    h("span", { class: "mono" }, shortId(id)), known ? ` ${known.title}` : null);
}

/** Where an artifact downloads from: http(s) URIs as they are, local store URIs under /v1/; null for other schemes. */
export function artifactHref(uri: string): string | null {
  if (/^https?:\/\//i.test(uri)) return uri;
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) return null;
  return `/v1/${uri.replace(/^\/+/, "")}`;
}

function artifact(v: Record<string, unknown>, mode: Mode): HTMLElement {
  const uri = String(v.uri ?? "");
  const name = uri.split("/").pop() || uri;
  const meta = [v.mime, typeof v.size === "number" ? fmtBytes(v.size) : undefined].filter(Boolean).join(", ");
  const href = artifactHref(uri);
  const text = mode === "face" ? "artifact" : name.length > 24 ? `${leading(name, 12)}…${trailing(name, 8)}` : name;
  return h("span", { class: "artifact" },
    href ? h("a", { href, download: "", target: "_blank", rel: "noopener noreferrer", title: uri }, "⇩ ", text) : h("span", { title: uri }, text),
    meta && mode === "detail" ? h("span", { class: "muted" }, ` (${meta})`) : null);
}

function linkish(s: string, mono: boolean): Child {
  if (/^https?:\/\//i.test(s)) return h("a", { href: s, target: "_blank", rel: "noopener noreferrer", class: mono ? "mono" : undefined }, s);
  return mono ? h("code", {}, s) : s;
}

/** One value (never empty) of a field. */
export function renderValue(def: FieldDef, v: unknown, mode: Mode): Child {
  const display = def.display;
  switch (def.type) {
    case "enum": {
      const vals = Array.isArray(v) ? v.map(String) : [String(v)];
      return h("span", { class: "badges" }, vals.map((x) => optionBadge(def, x)));
    }
    case "tags":
      return h("span", { class: "tags" }, (Array.isArray(v) ? v : [v]).map((t) => h("span", { class: "tag" }, String(t))));
    case "user": {
      const vals = Array.isArray(v) ? v.map(String) : [String(v)];
      return h("span", { class: "users" }, vals.map(userChip));
    }
    case "date": {
      const s = String(v);
      return h("time", { datetime: s, title: s }, mode === "face" ? fmtDate(s) : fmtTime(s));
    }
    case "number":
      return display === "badge" ? h("span", { class: "badge" }, String(v)) : h("span", { class: "num" }, String(v));
    case "card_link":
      return cardRef(String(v));
    case "artifact":
      return v && typeof v === "object" ? artifact(v as Record<string, unknown>, mode) : String(v);
    case "repeating": {
      const n = Array.isArray(v) ? v.length : 0;
      return mode === "face" ? h("span", { class: "muted" }, `${n} ${n === 1 ? "entry" : "entries"}`) : entries(def, Array.isArray(v) ? v : []);
    }
    case "text": {
      const s = String(v);
      if (mode === "face") return h("span", { class: "excerpt" }, leading(s.split("\n")[0]!, 80));
      if (display === "monospace") return h("pre", { class: "mono-block" }, s);
      const div = h("div", { class: "md" });
      div.innerHTML = markdown(s); // escaped first, see markdown.ts
      return div;
    }
    default: {
      const s = typeof v === "string" ? v : JSON.stringify(v);
      if (display === "badge") return h("span", { class: "badge" }, s);
      return linkish(s, display === "monospace");
    }
  }
}

/** Repeating entries: a timeline for display "feed", otherwise a list of records. */
export function entries(def: FieldDef, items: unknown[]): HTMLElement {
  const subs = (def.item_fields ?? []).filter((f) => f.display !== "hidden");
  const feed = def.display === "feed";
  if (!items.length) return h("p", { class: "muted" }, "No entries yet.");
  const ordered = feed ? [...items].reverse() : items;
  return h(feed ? "ol" : "ul", { class: feed ? "feed" : "records" }, ordered.map((raw) => {
    const e = (raw ?? {}) as Record<string, unknown>;
    return h("li", { "data-entry": String(e.entry_id ?? "") },
      subs.filter((f) => !isEmpty(e[f.id])).map((f) =>
        h("div", { class: `entry-field t-${f.type}` }, h("span", { class: "entry-label" }, label(f)), renderValue(f, e[f.id], "detail"))));
  }));
}
