/**
 * The top bar's secondary controls (saved filters, search, actor picker) and the ☰ button
 * that shows them where the window is both narrow and short (a phone on its side, a
 * desktop at 400 % zoom: 320×256 CSS px). There the bar keeps one row of the board picker,
 * the signals, live status and New card, so the board keeps most of the height (WCAG
 * 1.4.10); ☰ opens the rest as rows of the bar itself, pushing the board down, overlapping
 * nothing. Elsewhere the button is not shown and the controls sit in the bar as ever
 * (styles.css decides which, by the window's size).
 */
import { h, $ } from "./dom.ts";
import { narrowed } from "./state.ts";

const LABEL = "Search, filters and acting as";

/** The ☰ button and the part of the bar it shows, holding `controls`. */
export function barMenu(controls: HTMLElement[]): HTMLElement[] {
  const button = h("button", {
    type: "button", id: "bar-more", class: "bar-more", "aria-expanded": "false", "aria-controls": "bar-secondary",
    "aria-label": LABEL, title: LABEL, onclick: () => showMenu(button.getAttribute("aria-expanded") !== "true"),
  }, h("span", { "aria-hidden": "true" }, "☰"));
  const part = h("div", { id: "bar-secondary", class: "bar-secondary" }, controls);
  // Esc that no control inside used (a typed search clears first, a stepped picker goes back) closes it
  part.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || ev.defaultPrevented || !collapsible() || !isShown()) return;
    ev.preventDefault();
    ev.stopPropagation();
    showMenu(false);
    button.focus();
  });
  return [button, part];
}

/** Whether the bar folds its secondary controls behind ☰ at this window size. */
function collapsible(): boolean {
  return ($("#bar-more")?.getClientRects().length ?? 0) > 0;
}

function isShown(): boolean {
  return $("#bar-more")?.getAttribute("aria-expanded") === "true";
}

function showMenu(open: boolean): void {
  $("#bar-more")?.setAttribute("aria-expanded", String(open));
  $("#topbar")?.classList.toggle("more-open", open);
}

/** Focuses the search box (the `/` key), showing it first when it is folded away. */
export function focusSearch(): void {
  if (collapsible() && !isShown()) showMenu(true);
  $("#search")?.focus();
}

/** Marks ☰ while a filter or search narrows the board: folded away, they are not seen. */
export function markNarrowed(): void {
  const button = $("#bar-more");
  if (!button) return;
  const on = narrowed();
  button.toggleAttribute("data-narrowed", on);
  const label = on ? `${LABEL} (a filter or search narrows the board)` : LABEL;
  if (button.getAttribute("aria-label") !== label) button.setAttribute("aria-label", label);
}
