/**
 * What the board's monitors and default filter say, on the board: cards past their max
 * time in status ("stuck") or idle, a drained watched lane, the breach count in the top
 * bar, and the cards a board's default_filter hides. Read on load, kept current live.
 */
import { describe, expect, test } from "bun:test";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const T = 30_000;

const ui = servedBoard((files: any) => {
  // the sample main board watches todo (alert_when_empty); short limits keep the test quick
  const main = files["definitions/boards/main.json"];
  main.monitors.max_time_in_status = { doing: "1s" };
  main.monitors.idle_after = "3s";
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const task = (title: string, status: string) =>
  call(ui.srv.url, "POST", "/cards", { type_id: "task", title, status, fields: { priority: "normal" } });

describe.serial("board signals", () => {
  test("stuck and idle cards get badges, a drained watched lane is marked, the top bar counts them: on load and live", async () => {
    const old = await task("Stuck before the page opened", "doing");
    await sleep(1200);
    const page = await ui.browser.page();
    await page.goto(`${ui.srv.url}/ui/`);
    await page.locator("body[data-ready]").waitFor();
    await page.locator('#live-status[data-state="live"]').waitFor();

    // on load, from GET /breaches
    const stuck = page.locator(`.card[data-id="${old.id}"] .breach-badge.stuck`);
    await stuck.waitFor();
    expect(await stuck.getAttribute("title")).toMatch(/^In progress: \d+s in this status \(limit 1s\)$/);
    const todo = page.locator('.lane[data-lane="todo"]');
    expect(await todo.getAttribute("class")).toContain("drained");
    expect(await todo.locator(".drained-badge").isVisible()).toBe(true);
    const count = page.locator("#breach-count");
    await page.waitForFunction(() => document.querySelector("#breach-count")?.textContent === "⚠ 2");
    expect(await count.getAttribute("title")).toContain("1 past their time in status, 1 watched lanes empty");

    // live: a card that times out while the page is open, then goes idle
    const fresh = await task("Times out while watched", "doing");
    await page.locator(`.card[data-id="${fresh.id}"]`).waitFor();
    expect(await page.locator(`.card[data-id="${fresh.id}"] .breach-badge`).count()).toBe(0);
    await page.locator(`.card[data-id="${fresh.id}"] .breach-badge.stuck`).waitFor({ timeout: 4000 });
    await page.locator(`.card[data-id="${fresh.id}"] .breach-badge.idle`).waitFor({ timeout: 6000 });
    expect(await page.locator(`.card[data-id="${fresh.id}"]`).getAttribute("aria-label")).toContain("No change for");

    // live: the watched lane refills, and a stuck card that moves on loses its badge
    await task("Refills todo", "todo");
    await page.waitForFunction(() => !document.querySelector('.lane[data-lane="todo"]')!.classList.contains("drained"));
    expect(await todo.locator(".drained-badge").isVisible()).toBe(false);
    await call(ui.srv.url, "PATCH", `/cards/${old.id}`, { version: 1, status: "review" });
    await page.locator(`.lane[data-lane="review"] .card[data-id="${old.id}"]`).waitFor();
    await page.waitForFunction((id) => !document.querySelector(`.card[data-id="${id}"] .breach-badge`), old.id);
    await page.close();
  }, T);

  test("a board whose default filter hides cards says how many, and follows live changes", async () => {
    const bug = (title: string, resolution?: string) => call(ui.srv.url, "POST", "/cards", {
      type_id: "bug", title, fields: { severity: "minor", steps: "s", ...(resolution ? { resolution } : {}) },
    });
    await bug("Won't fix this", "wontfix");
    const open = await bug("Still open");
    const page = await ui.browser.page();
    await page.goto(`${ui.srv.url}/ui/?board=bugs`);
    await page.locator("body[data-ready]").waitFor();
    await page.locator('#live-status[data-state="live"]').waitFor();
    const note = page.locator("#hidden-note");
    await page.waitForFunction(() => document.querySelector("#hidden-note")?.textContent === "1 hidden by the board's filter");
    expect(await note.isVisible()).toBe(true);
    await call(ui.srv.url, "PATCH", `/cards/${open.id}`, { version: 1, fields: { resolution: "wontfix" } }, "agent-1");
    // the count is read again at most every 5 s: more than the default wait of 5 s
    await page.waitForFunction(() => document.querySelector("#hidden-note")?.textContent === "2 hidden by the board's filter", undefined, { timeout: 15_000 });
    expect(await page.locator(`.card[data-id="${open.id}"]`).count()).toBe(0);
    // the main board has no default filter: no note
    await page.locator("#board-picker").selectOption("main");
    await page.waitForFunction(() => (document.querySelector("#hidden-note") as HTMLElement).hidden);
    await page.close();
  }, T);
});
