/**
 * Dragging cards between lanes with pointer events (mouse, pen, and touch after a long
 * press so that a swipe still scrolls). Lanes the board's transition graph allows are
 * highlighted; the drop is sent to the server either way, which has the final word.
 */
import { allowedTargets, state } from "./state.ts";
import type { Card } from "./types.ts";

const THRESHOLD_PX = 5;
const LONG_PRESS_MS = 350;
const EDGE_PX = 48;

interface Drag { id: string; seen: Card | undefined; el: HTMLElement; x0: number; y0: number; x: number; y: number; dx: number; dy: number; ghost?: HTMLElement; from: string; timer?: ReturnType<typeof setTimeout>; armed: boolean }

/** `onDrop` gets the card as it was picked up: a move judged against it, so an agent's move meanwhile is a conflict, not undone. */
export function installDrag(root: HTMLElement, onDrop: (id: string, to: string, seen: Card | undefined) => void): { justDragged(): boolean } {
  let drag: Drag | null = null;
  let suppressUntil = 0;

  const laneAt = (x: number, y: number): HTMLElement | null =>
    (document.elementFromPoint(x, y) as HTMLElement | null)?.closest<HTMLElement>(".lane") ?? null;

  const start = (d: Drag) => {
    const rect = d.el.getBoundingClientRect();
    d.dx = d.x0 - rect.left;
    d.dy = d.y0 - rect.top;
    const ghost = d.el.cloneNode(true) as HTMLElement;
    ghost.classList.add("drag-ghost");
    ghost.removeAttribute("tabindex");
    ghost.style.width = `${rect.width}px`;
    document.body.append(ghost);
    d.ghost = ghost;
    d.el.classList.add("dragging");
    document.body.classList.add("is-dragging");
    const ok = allowedTargets(d.from, state.cards.get(d.id)?.type_id);
    for (const lane of root.querySelectorAll<HTMLElement>(".lane")) {
      const s = lane.dataset.lane!;
      if (s !== d.from) lane.classList.add(!ok || ok.has(s) ? "drop-allowed" : "drop-disallowed");
    }
  };

  const move = (d: Drag, x: number, y: number) => {
    d.x = x;
    d.y = y;
    if (!d.ghost) return;
    d.ghost.style.transform = `translate(${x - d.dx}px, ${y - d.dy}px) rotate(2deg)`;
    for (const l of root.querySelectorAll(".lane.drop-target")) l.classList.remove("drop-target");
    laneAt(x, y)?.classList.add("drop-target");
    if (!edgeFrame) edgeFrame = requestAnimationFrame(edgeScroll);
  };

  /**
   * While the pointer is held at the board's edge the board scrolls on, frame by frame,
   * whether or not the pointer moves (a finger held still at the edge of a phone).
   */
  let edgeFrame = 0;
  const edgeScroll = () => {
    edgeFrame = 0;
    const d = drag;
    if (!d?.ghost) return;
    const r = root.getBoundingClientRect();
    const dir = d.x < r.left + EDGE_PX ? -1 : d.x > r.right - EDGE_PX ? 1 : 0;
    if (dir === 0) return;
    const before = root.scrollLeft;
    root.scrollLeft += dir * 12;
    if (root.scrollLeft === before) return; // at the end of the board
    for (const l of root.querySelectorAll(".lane.drop-target")) l.classList.remove("drop-target");
    laneAt(d.x, d.y)?.classList.add("drop-target");
    edgeFrame = requestAnimationFrame(edgeScroll);
  };

  /** drops where the pointer last moved (a touch's pointerup may carry no position) */
  const end = (drop: boolean) => {
    const d = drag;
    drag = null;
    if (!d) return;
    if (d.timer) clearTimeout(d.timer);
    cancelAnimationFrame(edgeFrame);
    edgeFrame = 0;
    if (!d.ghost) return;
    d.ghost.remove();
    d.el.classList.remove("dragging");
    document.body.classList.remove("is-dragging");
    for (const l of root.querySelectorAll(".lane")) l.classList.remove("drop-target", "drop-allowed", "drop-disallowed");
    suppressUntil = Date.now() + 300;
    if (!drop) return;
    const lane = laneAt(d.x, d.y);
    if (lane?.dataset.lane && lane.dataset.lane !== d.from) onDrop(d.id, lane.dataset.lane, d.seen);
  };

  root.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || drag) return;
    const el = (ev.target as HTMLElement).closest<HTMLElement>(".card");
    if (!el || (ev.target as HTMLElement).closest("a,button,input,select,textarea")) return;
    drag = { id: el.dataset.id!, seen: state.cards.get(el.dataset.id!), el, x0: ev.clientX, y0: ev.clientY, x: ev.clientX, y: ev.clientY, dx: 0, dy: 0, from: el.dataset.status!, armed: ev.pointerType !== "touch" };
    if (!drag.armed) {
      const d = drag;
      d.timer = setTimeout(() => { d.armed = true; start(d); move(d, d.x0, d.y0); navigator.vibrate?.(10); }, LONG_PRESS_MS);
    }
  });
  window.addEventListener("pointermove", (ev) => {
    const d = drag;
    if (!d) return;
    const far = Math.hypot(ev.clientX - d.x0, ev.clientY - d.y0) > THRESHOLD_PX;
    if (!d.armed) { if (far) end(false); return; } // a touch that moves early is a scroll
    if (!d.ghost && far) start(d);
    move(d, ev.clientX, ev.clientY);
  });
  window.addEventListener("pointerup", () => end(true));
  window.addEventListener("pointercancel", () => end(false));
  // while a touch drag runs, the page must not scroll under the finger
  window.addEventListener("touchmove", (ev) => { if (drag?.ghost) ev.preventDefault(); }, { passive: false });
  window.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && drag?.ghost) { ev.stopPropagation(); end(false); } }, true);
  root.addEventListener("dragstart", (ev) => ev.preventDefault());

  return { justDragged: () => Date.now() < suppressUntil };
}
