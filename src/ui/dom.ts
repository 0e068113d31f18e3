/** Small DOM helpers: element construction without innerHTML, formatting of ids and times. */

export type Child = Node | string | number | null | undefined | false | Child[];
export type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** `h("div", {class: "x", onclick: fn}, "text", child)`; attribute values are set, never parsed as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (k === "value" && "value" in el) (el as HTMLInputElement).value = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

export function $(sel: string, root: ParentNode = document): HTMLElement | null {
  return root.querySelector<HTMLElement>(sel);
}

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c]!);
}

/** The first 8 hex characters after `card_` (DECISIONS: short id). */
export function shortId(id: string): string {
  return id.startsWith("card_") ? id.slice(5, 13) : id;
}

export function fmtTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function fmtDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric", year: d.getFullYear() === new Date().getFullYear() ? undefined : "numeric" });
}

export function ago(iso: string, now = Date.now()): string {
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(s)) return "";
  const abs = Math.abs(s);
  const [n, unit] = abs < 60 ? [abs, "s"] : abs < 3600 ? [abs / 60, "m"] : abs < 86400 ? [abs / 3600, "h"] : [abs / 86400, "d"];
  const v = `${Math.floor(n)}${unit}`;
  return s >= 0 ? `${v} ago` : `in ${v}`;
}

/** How long ago `iso` was, without "ago": "45s", "12m", "3h 20m", "2d 4h". */
export function elapsed(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.floor((now - new Date(iso).getTime()) / 1000));
  if (!Number.isFinite(s)) return "";
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  const [big, unit, small, smallUnit] = s < 86400 ? [s / 3600, "h", (s % 3600) / 60, "m"] : [s / 86400, "d", (s % 86400) / 3600, "h"];
  const rest = Math.floor(small);
  return `${Math.floor(big)}${unit}${rest ? ` ${rest}${smallUnit}` : ""}`;
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Runs `fn` once the calls stopped for `ms` (typing in the search box; never for live events, which may not stop). */
export function debounce<A extends unknown[]>(fn: (...a: A) => void, ms: number): (...a: A) => void {
  let t: ReturnType<typeof setTimeout> | undefined;
  return (...a: A) => {
    if (t) clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

/**
 * A throttle that never starves: the first call runs `fn` after `first` ms, later calls at
 * most once every `every` ms (or ten times as long as the last run took, if longer) however
 * steadily they come, and a call made while `fn` runs is served by one more run after it.
 * Runs never overlap.
 */
export function throttle(fn: () => unknown, every: number, first = 50): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let again = false;
  let next = -Infinity;
  const run = async () => {
    timer = undefined;
    running = true;
    const started = Date.now();
    try {
      await fn();
    } catch {
      // the caller reports its own errors; the next call tries again
    } finally {
      running = false;
      // a slow read (a narrowed count over 100,000 cards) is asked for at most a tenth of
      // the time, so a page left open never keeps the server busy
      next = started + Math.max(every, (Date.now() - started) * 10);
      if (again) { again = false; ask(); }
    }
  };
  const ask = () => {
    if (running) { again = true; return; }
    timer ??= setTimeout(run, Math.max(first, next - Date.now()));
  };
  return ask;
}

/**
 * Makes `list`'s children exactly `want`, in order, touching only what differs: elements
 * not wanted are removed, a moved one is taken out and put back once, new ones inserted.
 * A live change of one card is then one or two DOM operations, not a rebuilt list.
 */
export function syncChildren(list: Element, want: readonly Element[]): void {
  const keep = new Set(want);
  for (const c of [...list.children]) if (!keep.has(c)) c.remove();
  let at = list.firstElementChild;
  for (const el of want) {
    if (at === el) { at = at.nextElementSibling; continue; }
    if (at && at.nextElementSibling === el) {
      // `at` belongs further down: take it out; it is put back when its turn comes
      const stray = at;
      at = el.nextElementSibling;
      stray.remove();
      continue;
    }
    list.insertBefore(el, at);
  }
}
