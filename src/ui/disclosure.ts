/**
 * A button that shows a small panel of words under it: a disclosure, not a dialog. The
 * page around it stays usable and the focus stays on the button when it opens (Tab goes
 * on into the panel, which follows the button in the page's order). Esc, a second press,
 * a click elsewhere or the focus leaving for another control closes it; Esc gives the
 * focus back to the button. The panel floats over the board (position: fixed), placed
 * under its button and kept inside the window, so opening it moves nothing on the page.
 */

export interface Disclosure {
  isOpen(): boolean;
  /** Shows or hides the panel; `focusButton` hands the focus back to the button. */
  set(open: boolean, focusButton?: boolean): void;
  /** Draws the panel again when it is open (its content changed); the focus stays where it is. */
  redraw(): void;
}

const GAP_PX = 4;
const MARGIN_PX = 8;

/** Wires `button` to show and hide `panel`; `draw` fills the panel each time it opens or is redrawn. */
export function disclosure(button: HTMLButtonElement, panel: HTMLElement, draw: () => void): Disclosure {
  button.setAttribute("aria-expanded", "false");
  button.setAttribute("aria-controls", panel.id);
  panel.hidden = true;
  panel.classList.add("popover");
  const isOpen = () => !panel.hidden;
  const place = () => {
    const r = button.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    panel.style.top = `${r.bottom + GAP_PX}px`;
    // taller than the room under the button: the panel scrolls, the page does not
    panel.style.maxHeight = `${Math.max(64, window.innerHeight - r.bottom - GAP_PX - MARGIN_PX)}px`;
    panel.style.left = `${Math.max(MARGIN_PX, Math.min(r.left, width - panel.offsetWidth - MARGIN_PX))}px`;
  };
  const set = (open: boolean, focusButton = false) => {
    if (open !== isOpen()) {
      panel.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
      if (open) { draw(); place(); }
    }
    if (focusButton) button.focus();
  };
  button.addEventListener("click", () => set(!isOpen()));
  const onKey = (ev: KeyboardEvent) => {
    if (ev.key !== "Escape" || !isOpen()) return;
    // before the page's own Esc (which would close the card panel)
    ev.preventDefault();
    ev.stopPropagation();
    set(false, true);
  };
  button.addEventListener("keydown", onKey);
  panel.addEventListener("keydown", onKey);
  const inside = (t: EventTarget | null) => t instanceof Node && (panel.contains(t) || button.contains(t));
  // the focus moving on to another control (Tab past the panel, a click on a card): the
  // panel would cover what now has the focus. A focus that merely falls away is no reason
  const onFocusOut = (ev: FocusEvent) => { if (isOpen() && ev.relatedTarget && !inside(ev.relatedTarget)) set(false); };
  button.addEventListener("focusout", onFocusOut);
  panel.addEventListener("focusout", onFocusOut);
  // page-wide listeners end with the top bar that drew the button (definitions reloaded)
  const stop = new AbortController();
  const gone = () => { if (button.isConnected) return false; stop.abort(); return true; };
  document.addEventListener("pointerdown", (ev) => { if (!gone() && isOpen() && !inside(ev.target)) set(false); }, { signal: stop.signal });
  window.addEventListener("resize", () => { if (!gone() && isOpen()) place(); }, { signal: stop.signal });
  return {
    isOpen,
    set,
    redraw: () => { if (isOpen()) { draw(); place(); } },
  };
}
