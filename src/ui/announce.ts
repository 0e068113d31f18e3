/**
 * The page's one polite status region, for what a screen reader should hear without the
 * focus moving: a keyboard or drag move and the lane it made, moves by others seen live,
 * how many cards a search or filter matches, where the focus went when its card left.
 * The lane counts and the top bar's signals are not live: they change on every agent write.
 */
import { $ } from "./dom.ts";

/** Messages said within this window are read as one (a burst of writes is one message). */
const GATHER_MS = 150;
let queued: string[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;

export function announce(text: string): void {
  queued.push(text);
  timer ??= setTimeout(() => {
    timer = undefined;
    const region = $("#announcer");
    const said = queued.join(" ");
    queued = [];
    if (!region) return;
    // emptied first, so that the same words twice (two moves to one lane) are read twice
    region.textContent = "";
    requestAnimationFrame(() => { region.textContent = said; });
  }, GATHER_MS);
}

/** "1 card", "3 cards" */
export function cards(n: number): string {
  return `${n.toLocaleString("en-US")} card${n === 1 ? "" : "s"}`;
}
