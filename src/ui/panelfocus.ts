/**
 * Focus that is never hidden (WCAG 2.4.11). The card panel covers the top bar's right end
 * and part of the board (all of the page on a phone): while it is open, Tab and Shift+Tab
 * go round inside it, and Esc or × gives the focus back to the card. Inside the panel and
 * the dialogs, a focused control is kept clear of their sticky bars (the panel's head, a
 * form's Save/Cancel footer), which the browser's own scrolling does not know about.
 */

const TABBABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';

/** The panel's tab stops, in order: enabled, shown, not inside a closed <details>. */
function stops(panel: HTMLElement): HTMLElement[] {
  return [...panel.querySelectorAll<HTMLElement>(TABBABLE)].filter((el) =>
    !(el as HTMLButtonElement).disabled && el.tabIndex >= 0 && el.getClientRects().length > 0);
}

/** Scrolls `box` so that `el` is out from under the box's sticky bars. */
function clearOfBars(el: HTMLElement, box: HTMLElement): void {
  for (const bar of box.querySelectorAll<HTMLElement>(".detail-head, .dialog-actions")) {
    if (bar.contains(el) || getComputedStyle(bar).position !== "sticky" || bar.closest("[hidden]")) continue;
    const r = el.getBoundingClientRect();
    const b = bar.getBoundingClientRect();
    if (r.bottom <= b.top || r.top >= b.bottom) continue;
    const atTop = getComputedStyle(bar).top !== "auto";
    box.scrollTop += atTop ? r.top - b.bottom - 8 : r.bottom - b.top + 8;
  }
}

export function installPanelFocus(panel: HTMLElement): void {
  panel.addEventListener("keydown", (ev) => {
    if (ev.key !== "Tab" || ev.ctrlKey || ev.altKey || ev.metaKey || panel.hidden) return;
    const list = stops(panel);
    if (!list.length) return;
    const at = list.indexOf(document.activeElement as HTMLElement);
    if (!ev.shiftKey && at === list.length - 1) { ev.preventDefault(); list[0]!.focus(); }
    // from the first stop, or from the title (focused on opening, not a tab stop)
    else if (ev.shiftKey && at <= 0) { ev.preventDefault(); list[list.length - 1]!.focus(); }
  });
  document.addEventListener("focusin", (ev) => {
    const el = ev.target as HTMLElement;
    const box = el.closest?.<HTMLElement>("#detail, dialog");
    // after the browser's own scroll into view
    if (box) requestAnimationFrame(() => { if (document.activeElement === el) clearOfBars(el, box); });
  });
}
