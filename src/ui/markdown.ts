/**
 * A small, safe markdown renderer for text fields and comments. The source is HTML-escaped
 * first; only the tags produced here reach the page, and link targets are limited to
 * http(s), mailto and relative URLs (no control characters). Code spans and links are stashed
 * behind \u0000N\u0000 placeholders while the rest is parsed; a URL or alt text holding one is
 * never used in an attribute, so a stashed tag cannot land inside another tag's attribute.
 * Supports headings, paragraphs (soft and hard breaks), lists
 * (with task boxes), block quotes, fenced code, rules, `code`, **bold**, *em*, ~~strike~~,
 * [links](url), bare URLs and ![images](url) from https or this server (what the CSP loads).
 */
import { escapeHtml } from "./dom.ts";

export function markdown(src: string): string {
  return blocks(escapeHtml(src.replace(/\u0000/g, "").replace(/\r\n?/g, "\n")).split("\n"));
}

const FENCE = /^\s*(`{3,}|~{3,})/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s*&gt;\s?/;
const BULLET = /^\s*[-*+]\s+/;
const ORDERED = /^\s*\d{1,9}[.)]\s+/;

function blocks(lines: string[]): string {
  const out: string[] = [];
  let i = 0;
  const starts = (l: string) => FENCE.test(l) || HEADING.test(l) || RULE.test(l) || QUOTE.test(l) || BULLET.test(l) || ORDERED.test(l);
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "") { i++; continue; }
    const fence = FENCE.exec(line);
    if (fence) {
      const buf: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!); i++) buf.push(lines[i]!);
      i++;
      out.push(`<pre><code>${buf.join("\n")}</code></pre>`);
      continue;
    }
    const head = HEADING.exec(line);
    if (head) {
      const level = Math.min(head[1]!.length + 2, 6); // h3..h6 inside a card
      out.push(`<h${level}>${inline(head[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) { out.push("<hr>"); i++; continue; }
    if (QUOTE.test(line)) {
      const buf: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) buf.push(lines[i++]!.replace(QUOTE, ""));
      out.push(`<blockquote>${blocks(buf)}</blockquote>`);
      continue;
    }
    const ordered = ORDERED.test(line);
    if (ordered || BULLET.test(line)) {
      const marker = ordered ? ORDERED : BULLET;
      const items: string[] = [];
      while (i < lines.length && marker.test(lines[i]!)) {
        let item = lines[i++]!.replace(marker, "");
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]!) && !marker.test(lines[i]!)) item += `\n${lines[i++]!.trim()}`;
        items.push(`<li>${task(inline(item))}</li>`);
      }
      out.push(ordered ? `<ol>${items.join("")}</ol>` : `<ul>${items.join("")}</ul>`);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== "" && (para.length === 0 || !starts(lines[i]!))) para.push(lines[i++]!);
    out.push(paragraph(para));
  }
  return out.join("");
}

/** A single newline is a soft break; two trailing spaces or a trailing backslash make a hard one. */
function paragraph(lines: string[]): string {
  const last = lines.length - 1;
  return `<p>${lines.map((l, n) => {
    const hard = n < last && /(\s{2,}|\\)$/.test(l);
    const text = inline(l.trim().replace(/\\$/, ""));
    return n === last ? text : `${text}${hard ? "<br>" : "\n"}`;
  }).join("")}</p>`;
}

function task(item: string): string {
  if (item.startsWith("[ ] ")) return `<span class="md-task" aria-label="open">☐</span> ${item.slice(4)}`;
  if (/^\[[xX]\] /.test(item)) return `<span class="md-task done" aria-label="done">☑</span> ${item.slice(4)}`;
  return item;
}

/**
 * A link's `(url "title")`: the url may hold one level of balanced parentheses (as in
 * Wikipedia's `Foo_(bar)`), the title is optional (its quotes are escaped by now) and
 * short: an unbounded one was tried from every `](` to the end of the line (quadratic).
 */
const TARGET = String.raw`\(((?:[^()\s]|\([^()\s]*\))+)(?:\s+&quot;((?:(?!&quot;)[^\n)]){0,300})&quot;)?\)`;

/** Inline markup on escaped text; code spans and links are stashed so nothing inside them is re-parsed. */
export function inline(text: string): string {
  const stash: string[] = [];
  const keep = (html: string) => `\u0000${stash.push(html) - 1}\u0000`;
  let s = text.replace(/\u0000/g, "").replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, _t, code: string) => keep(`<code>${code.trim()}</code>`));
  s = s.replace(new RegExp(`!\\[([^\\]\\n]*)\\]${TARGET}`, "g"), (all, alt: string, url: string, title?: string) => {
    if (alt.includes("\u0000") || title?.includes("\u0000")) return all; // attributes: no stashed markup in them
    const t = title ? ` title="${title}"` : "";
    if (imageUrl(url)) return keep(`<img src="${url}" alt="${alt}"${t} loading="lazy" referrerpolicy="no-referrer">`);
    const href = safeUrl(url); // a picture the page may not load is offered as a link
    return href ? keep(`<a href="${href}"${t} target="_blank" rel="noopener noreferrer">${alt || href}</a>`) : all;
  });
  s = s.replace(new RegExp(`\\[([^\\]\\n]+)\\]${TARGET}`, "g"), (all, label: string, url: string, title?: string) => {
    if (title?.includes("\u0000")) return all;
    const href = safeUrl(url);
    return href ? keep(`<a href="${href}"${title ? ` title="${title}"` : ""} target="_blank" rel="noopener noreferrer">${label}</a>`) : all;
  });
  // a bare URL ends before a placeholder: it must never swallow a stashed tag into its href
  s = s.replace(/(^|[\s(])(https?:\/\/(?:(?!&(?:quot|lt|gt|#39);)[^\s)\u0000])*[^\s).,;:!?\u0000])/g, (_, pre: string, url: string) =>
    pre + keep(`<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>`));
  s = s
    .replace(/\*\*(\S(?:[\s\S]*?\S)?)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w])__(\S(?:[\s\S]*?\S)?)__(?!\w)/g, "$1<strong>$2</strong>")
    .replace(/\*(\S(?:[^*]*?\S)?)\*/g, "<em>$1</em>")
    .replace(/(^|[^\w])_(\S(?:[^_]*?\S)?)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/~~(\S(?:[\s\S]*?\S)?)~~/g, "<del>$1</del>");
  // a stashed link may hold a stashed picture: expand until none is left (each refers back only)
  const unstash = (x: string): string => x.replace(/\u0000(\d+)\u0000/g, (_, n: string) => unstash(stash[Number(n)]!));
  return unstash(s);
}

/**
 * Control characters, DEL and white space: a browser strips them from the ends of a URL (and
 * tabs and newlines from anywhere), so `\u0001javascript:` would run as javascript:. A URL
 * holding one is never used; the \u0000 placeholders of stashed markup are among them.
 */
const UNSAFE_CHARS = /[\u0000-\u0020\u007f]/;

/** Pictures the page's CSP lets it load (img-src 'self' https:): https URLs and paths on this server. */
function imageUrl(url: string): boolean {
  return !UNSAFE_CHARS.test(url) && (/^https:\/\/[^/]/i.test(url) || /^\/(?!\/)/.test(url));
}

/** An escaped URL that may become an href, or null (javascript:, data: and other schemes, control characters). */
function safeUrl(url: string): string | null {
  if (UNSAFE_CHARS.test(url)) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.replace(/&amp;/g, "&"));
  if (!scheme) return url; // relative, #anchor or /path
  return ["http", "https", "mailto"].includes(scheme[1]!.toLowerCase()) ? url : null;
}
