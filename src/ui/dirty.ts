/**
 * Whether a form holds an edit in progress: its controls differ from what they held when
 * the form was drawn (markClean). Esc uses it so it never throws typed input away.
 * Values set by script (defaults, the card's current values) count as clean.
 */

const clean = new WeakMap<HTMLFormElement, string>();

function values(form: HTMLFormElement): string {
  return JSON.stringify([...form.elements].map((el) => {
    if (el instanceof HTMLInputElement) {
      if (el.type === "checkbox" || el.type === "radio") return el.checked;
      if (el.type === "file") return el.files?.length ?? 0;
      return el.value;
    }
    return el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement ? el.value : null;
  }));
}

/** Remembers the form's values as the untouched state. */
export function markClean(form: HTMLFormElement): void {
  clean.set(form, values(form));
}

export function isDirty(form: HTMLFormElement): boolean {
  const was = clean.get(form);
  return was !== undefined && was !== values(form);
}

/** Marks every form under `root` clean (call right after drawing them). */
export function markAllClean(root: ParentNode): void {
  for (const f of root.querySelectorAll("form")) markClean(f);
}

export function anyDirty(root: ParentNode): boolean {
  return [...root.querySelectorAll("form")].some(isDirty);
}
