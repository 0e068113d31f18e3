/**
 * What a person has typed, ticked or opened in the detail panel, carried across a re-render
 * of the same card (a live update must not wipe a half-written comment). Controls are
 * matched by where they sit: the field or section, the form, and their index in it.
 */

export interface Drafts {
  values: Map<string, string | boolean>;
  open: Set<string>;
  focus: string | null;
  /** the focused text control's caret or selection, and its own scroll */
  selection: { start: number; end: number; direction: "forward" | "backward" | "none"; scroll: number } | null;
  scroll: number;
}

const CONTROLS = "input, textarea, select, details";

function keyOf(el: Element): string {
  const form = el.closest("form");
  const host = el.closest("[data-field], .detail-section");
  const hostKey = host ? (host.getAttribute("data-field") ?? host.className) : "";
  // an entry or a comment by its id: a new one drawn above it does not shift the focus
  // onto another entry's button
  const item = el.closest("[data-entry], [data-comment]");
  const itemKey = item ? (item.getAttribute("data-entry") ?? item.getAttribute("data-comment") ?? "") : "";
  const scope: ParentNode = form ?? item ?? host ?? document;
  const index = [...scope.querySelectorAll(el.tagName)].indexOf(el);
  return `${hostKey}|${itemKey}|${form?.className ?? ""}|${el.tagName}|${index}`;
}

function changed(el: Element): string | boolean | undefined {
  if (el instanceof HTMLInputElement) {
    if (el.type === "checkbox" || el.type === "radio") return el.checked !== el.defaultChecked ? el.checked : undefined;
    if (el.type === "file") return undefined;
    return el.value !== el.defaultValue ? el.value : undefined;
  }
  if (el instanceof HTMLTextAreaElement) return el.value !== el.defaultValue ? el.value : undefined;
  if (el instanceof HTMLSelectElement && el.closest("form")) {
    const def = [...el.options].find((o) => o.defaultSelected)?.value ?? el.options[0]?.value;
    return el.value !== def ? el.value : undefined;
  }
  return undefined;
}

export function saveDrafts(root: HTMLElement): Drafts {
  const d: Drafts = { values: new Map(), open: new Set(), focus: null, selection: null, scroll: root.scrollTop };
  for (const el of root.querySelectorAll(CONTROLS)) {
    if (el instanceof HTMLDetailsElement) { if (el.open) d.open.add(keyOf(el)); continue; }
    const v = changed(el);
    if (v !== undefined) d.values.set(keyOf(el), v);
  }
  const active = document.activeElement;
  if (active && root.contains(active) && active.matches(CONTROLS + ", button")) {
    d.focus = keyOf(active);
    // a redraw while the person types must not move the caret to the end (an agent's append)
    if ((active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement) && active.selectionStart !== null && active.selectionEnd !== null) {
      d.selection = { start: active.selectionStart, end: active.selectionEnd, direction: active.selectionDirection ?? "none", scroll: active.scrollTop };
    }
  }
  return d;
}

export function restoreDrafts(root: HTMLElement, d: Drafts): void {
  for (const el of root.querySelectorAll(CONTROLS + ", button")) {
    const key = keyOf(el);
    if (el instanceof HTMLDetailsElement) el.open = d.open.has(key);
    else if (d.values.has(key)) {
      const v = d.values.get(key)!;
      if (el instanceof HTMLInputElement && typeof v === "boolean") el.checked = v;
      else (el as HTMLInputElement).value = String(v);
    }
    if (key === d.focus) {
      (el as HTMLElement).focus({ preventScroll: true });
      if (d.selection && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) {
        try { el.setSelectionRange(d.selection.start, d.selection.end, d.selection.direction); } catch { /* a type without a caret */ }
        el.scrollTop = d.selection.scroll;
      }
    }
  }
  root.scrollTop = d.scroll;
}
