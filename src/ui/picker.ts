/**
 * Pickers (selects) that act only on a confirmed choice: the detail's status and owner
 * pickers, and the top bar's board and actor pickers.
 */

/**
 * Calls `apply` with a picker's value once the person has chosen it: at once for a pick
 * with the mouse or touch, but for the keyboard only on Enter or on leaving the picker.
 * A closed select changes its value on every arrow key, and each change would be a write
 * (a claim, then hand-overs, each an event agents act on). Escape puts the value back.
 */
export function onPicked(sel: HTMLSelectElement, current: () => string, apply: (value: string) => Promise<unknown>): void {
  let keyed = false;
  /** the value a write is on its way for: a second Enter does not send it again */
  let sending: string | undefined;
  const pending = (on: boolean) => {
    if (on) { sel.dataset.pending = "1"; return; }
    if (sel.dataset.pending === undefined) return;
    delete sel.dataset.pending;
    // the panel held this part back meanwhile: it follows the card again (a detail picker)
    sel.dispatchEvent(new CustomEvent("detail-stale", { bubbles: true }));
  };
  const commit = () => {
    keyed = false;
    pending(false);
    const value = sel.value;
    if (value === current() || value === sending) return;
    sending = value;
    void apply(value).finally(() => { if (sending === value) sending = undefined; });
  };
  sel.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      if (keyed || sel.value !== current()) ev.preventDefault();
      commit();
    } else if (ev.key === "Escape" && sel.value !== current()) {
      ev.preventDefault();
      ev.stopPropagation(); // the panel stays open: only the pick is undone
      sel.value = current();
      keyed = false;
      pending(false);
    } else if (ev.key === " " || ev.key === "F4" || (ev.altKey && /^Arrow(Up|Down)$/.test(ev.key))) {
      keyed = false; // these open the list: a pick there is the confirmation
      sel.dataset.open = "1";
    } else if (/^(Arrow|Page|Home|End)/.test(ev.key) || (ev.key.length === 1 && !ev.ctrlKey && !ev.metaKey)) {
      keyed = true; // stepping through the values of the closed picker
    }
  });
  // a stepped value not yet confirmed: the panel does not redraw this part meanwhile (detail.ts)
  sel.addEventListener("keyup", () => pending(keyed && sel.value !== current()));
  // a pick with the mouse writes at once; while its list is open the panel does not
  // redraw the part (the list would close under the pointer)
  // (a second press on the picker closes its list: picked nothing, it follows the card again)
  sel.addEventListener("pointerdown", () => {
    keyed = false;
    if (sel.dataset.open === undefined) sel.dataset.open = "1";
    else setTimeout(() => { if (sel.dataset.open !== undefined && sel.value === current()) closed(); });
  });
  const closed = () => {
    if (sel.dataset.open === undefined) return;
    delete sel.dataset.open;
    sel.dispatchEvent(new CustomEvent("detail-stale", { bubbles: true }));
  };
  sel.addEventListener("keyup", (ev) => { if (ev.key === "Escape" || ev.key === "Enter") closed(); });
  sel.addEventListener("change", () => { if (!keyed) commit(); closed(); });
  // leaving the picker confirms; a picker taken out of the page by a redraw confirms nothing
  sel.addEventListener("blur", () => {
    if (keyed && sel.isConnected) commit();
    if (sel.isConnected) closed();
  });
}
