/**
 * The workspace's users as the page knows them: read at load, and again (at most every
 * 5 s) when a card names a user the page does not know or when the person comes back to
 * the tab or opens the actor picker (a user registered meanwhile, `cards users add`).
 * Whoever draws users (the actor picker, the detail panel's pickers) listens for changes.
 */
import { getWorkspace } from "./api.ts";
import { state } from "./state.ts";

let readAt = 0;
const listeners: Array<() => void> = [];

export function onUsersChanged(fn: () => void): void {
  listeners.push(fn);
}

/** Reads the users again unless they were read within the last 5 s. */
export function readUsersAgain(): void {
  if (Date.now() - readAt < 5000) return;
  readAt = Date.now();
  void getWorkspace().then((info) => {
    if (JSON.stringify(info.workspace.users) === JSON.stringify(state.info.workspace.users)) return;
    state.info.workspace.users = info.workspace.users;
    for (const fn of listeners) fn();
  }, () => { readAt = 0; /* the next occasion tries again */ });
}
