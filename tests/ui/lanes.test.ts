/**
 * Lanes that hold more cards than they show, and a board under steady writes: each lane
 * reads its first cards in its own order (lane_sort) with an exact count and a "Show more"
 * footer; a narrowed board keeps up while writes never pause; a live change touches only
 * the card it changed; a move is sent before the lanes are redrawn.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const T = 30_000;
const LANE = 250;

const ui = servedBoard();
let newest: any;

/** `n` bugs in backlog, 8 at a time. */
async function bugs(n: number): Promise<any[]> {
  const out: any[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      out[i] = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: `Bug ${i + 1}`, status: "backlog", fields: { severity: "minor", steps: "s" } });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

beforeAll(async () => {
  const older = await bugs(LANE - 1);
  await Bun.sleep(10); // a later created_at than every other bug, not a tie broken by id
  newest = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "The newest bug", status: "backlog", fields: { severity: "major", steps: "s" } });
  // older bugs edited after it: by last change, the newest bug is past the first page
  for (const b of older.slice(0, 110)) await call(ui.srv.url, "PATCH", `/cards/${b.id}`, { version: b.version, title: `${b.title} (edited)` }, "agent-1");
}, 120_000);

async function openBoard(page: Page, query: string): Promise<void> {
  await page.goto(`${ui.srv.url}/ui/${query}`);
  await page.locator("body[data-ready]").waitFor();
}

const lane = (page: Page, id: string) => page.locator(`.lane[data-lane="${id}"]`);
const shown = (page: Page, id: string) => lane(page, id).locator(".card").count();

describe.serial("lanes", () => {
  test("a lane over one page shows its exact count and a footer; Show more follows the default order", async () => {
    const page = await ui.browser.page();
    await openBoard(page, "?board=main");
    const backlog = lane(page, "backlog");
    expect(await backlog.locator(".lane-count").textContent()).toBe(String(LANE));
    expect(await backlog.locator(".lane-count").getAttribute("title")).toBe(`${LANE} cards`);
    expect(await shown(page, "backlog")).toBe(100);
    expect(await backlog.locator(".lane-shown").textContent()).toBe(`Showing 100 of ${LANE}`);
    const api = await call(ui.srv.url, "GET", "/cards?board_id=main&status=backlog&limit=100");
    expect(await backlog.locator(".card").evaluateAll((cs) => cs.map((c) => (c as HTMLElement).dataset.id))).toEqual(api.items.map((c: any) => c.id));
    await backlog.locator(".lane-more").click();
    await page.waitForFunction(() => document.querySelectorAll('.lane[data-lane="backlog"] .card').length === 200);
    expect(await backlog.locator(".lane-shown").textContent()).toBe(`Showing 200 of ${LANE}`);
    await backlog.locator(".lane-more").click();
    await page.waitForFunction((n) => document.querySelectorAll('.lane[data-lane="backlog"] .card').length === n, LANE);
    expect(await backlog.locator(".lane-foot").isHidden()).toBe(true);
    // a card written elsewhere changes the count live
    await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "One more", status: "backlog", fields: { priority: "low" } });
    await page.waitForFunction((n) => document.querySelector('.lane[data-lane="backlog"] .lane-count')?.textContent === String(n), LANE + 1);
    await page.close();
  }, T);

  test("a custom lane_sort is read from the server in that order: the newest bug leads, at most 200 shown", async () => {
    const page = await ui.browser.page();
    const reads: string[] = [];
    page.on("request", (r) => { if (r.url().includes("/v1/cards?") && r.url().includes("status=backlog")) reads.push(r.url()); });
    await openBoard(page, "?board=bugs");
    const backlog = lane(page, "backlog");
    expect(reads.some((u) => new URL(u).searchParams.get("sort") === "-created_at")).toBe(true);
    expect(await backlog.locator(".card").first().getAttribute("data-id")).toBe(newest.id);
    expect(await backlog.locator(".lane-count").textContent()).toBe(String(LANE));
    expect(await backlog.locator(".lane-shown").textContent()).toBe(`Showing 100 of ${LANE}`);
    await backlog.locator(".lane-more").click();
    await page.waitForFunction(() => document.querySelectorAll('.lane[data-lane="backlog"] .card').length === 200);
    expect(await backlog.locator(".lane-shown").textContent()).toBe(`Showing 200 of ${LANE}, the first 200 newest first: search or pick a filter to find the others`);
    expect(await backlog.locator(".lane-more").isHidden()).toBe(true);
    await page.close();
  }, T);

  test("a searched board keeps updating while writes never pause", async () => {
    const page = await ui.browser.page();
    await openBoard(page, "?board=main&q=needle");
    await page.locator('#live-status[data-state="live"]').waitFor();
    let card = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Written over and over", fields: { priority: "low" } });
    let writing = true;
    const writer = (async () => {
      const stop = Date.now() + 5000;
      for (let i = 0; Date.now() < stop; i++) card = await call(ui.srv.url, "PATCH", `/cards/${card.id}`, { version: card.version, title: `Written over and over ${i}` }, "agent-1");
      writing = false;
    })();
    await Bun.sleep(800);
    const t0 = Date.now();
    const marker = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "A needle in the storm", status: "todo", fields: { priority: "low" } });
    await lane(page, "todo").locator(`.card[data-id="${marker.id}"]`).waitFor({ timeout: 8000 });
    const ms = Date.now() - t0;
    const during = writing;
    await writer;
    console.log(`searched board: a matching card shown ${ms} ms after it was written, while writes went on: ${during}`);
    expect(during).toBe(true);
    await page.close();
  }, T);

  test("a live change moves only that card's element; lanes and cards are contained", async () => {
    const page = await ui.browser.page();
    await openBoard(page, "?board=main");
    const last = await lane(page, "backlog").locator(".card").last().getAttribute("data-id");
    await page.evaluate(() => {
      const w = window as any;
      w.touched = 0;
      new MutationObserver((ms) => { for (const m of ms) w.touched += m.addedNodes.length + m.removedNodes.length; })
        .observe(document.querySelector('.lane[data-lane="backlog"] .lane-cards')!, { childList: true });
    });
    const card = await call(ui.srv.url, "GET", `/cards/${last}`);
    await call(ui.srv.url, "PATCH", `/cards/${last}`, { version: card.version, title: "Edited live, moved to the top" }, "agent-1");
    await page.waitForFunction((id) => document.querySelector('.lane[data-lane="backlog"] .card')?.getAttribute("data-id") === id, last);
    await page.waitForTimeout(1000); // the count refresh that follows redraws nothing
    expect(await page.evaluate(() => (window as any).touched)).toBe(2); // the old face out, the new one in
    // and what changes inside a lane or a card is laid out and painted there only
    expect(await lane(page, "backlog").locator(".lane-cards").evaluate((el) => getComputedStyle(el).contain)).toBe("strict");
    expect(await lane(page, "backlog").locator(".card").first().evaluate((el) => getComputedStyle(el).contain)).toBe("layout style");
    await page.close();
  }, T);

  test("a move is sent before the lanes are redrawn", async () => {
    const page = await ui.browser.page();
    await openBoard(page, "?board=main");
    const id = (await lane(page, "backlog").locator(".card").first().getAttribute("data-id"))!;
    await page.evaluate((cardId) => {
      const w = window as any;
      w.drawnWhenSent = [];
      const send = window.fetch;
      window.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
        if (init?.method === "PATCH") w.drawnWhenSent.push(Boolean(document.querySelector(`.lane[data-lane="todo"] .card[data-id="${cardId}"]`)));
        return send(input, init);
      }) as typeof fetch;
    }, id);
    await lane(page, "backlog").locator(`.card[data-id="${id}"]`).focus();
    await page.keyboard.press("Shift+ArrowRight");
    await lane(page, "todo").locator(`.card[data-id="${id}"]`).waitFor();
    expect(await page.evaluate(() => (window as any).drawnWhenSent)).toEqual([false]);
    await page.waitForFunction((cid) => (document.activeElement as HTMLElement | null)?.dataset.id === cid, id);
    expect((await call(ui.srv.url, "GET", `/cards/${id}`)).status).toBe("todo");
    await page.close();
  }, T);
  test("blocked badges hold when the board has more blocked cards than one page (each lane's own are read)", async () => {
    const blocker = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "The blocker", status: "doing", fields: { priority: "normal" } });
    const link = (id: string) => call(ui.srv.url, "POST", `/cards/${id}/links`, { type_id: "depends-on", target: blocker.id });
    // blocked first, so 205 cards blocked later come before it in the board's blocked list
    const stuck = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Blocked long ago", status: "review", fields: { priority: "normal" } });
    await link(stuck.id);
    const api = await call(ui.srv.url, "GET", "/cards?board_id=main&status=backlog&limit=200");
    const more = await call(ui.srv.url, "GET", `/cards?board_id=main&status=backlog&limit=200&cursor=${encodeURIComponent(api.next_cursor)}`);
    const backlog = [...api.items, ...more.items].slice(0, 205);
    for (let i = 0; i < backlog.length; i += 8) await Promise.all(backlog.slice(i, i + 8).map((c: any) => link(c.id)));
    expect((await call(ui.srv.url, "GET", "/cards?board_id=main&blocked=true&limit=200")).items.map((c: any) => c.id)).not.toContain(stuck.id);
    const page = await ui.browser.page();
    await openBoard(page, "?board=main");
    expect(await lane(page, "review").locator(`.card[data-id="${stuck.id}"] .blocked-badge`).count()).toBe(1);
    expect(await lane(page, "backlog").locator(".card .blocked-badge").count()).toBe(100);
    expect(await lane(page, "doing").locator(`.card[data-id="${blocker.id}"] .blocked-badge`).count()).toBe(0);
    await page.close();
  }, 60_000);
  test("a lane that agents empty card by card is read again: it never says No cards beside a count", async () => {
    const page = await ui.browser.page();
    await openBoard(page, "?board=main");
    await page.locator('#live-status[data-state="live"]').waitFor();
    const backlog = lane(page, "backlog");
    const ids = await backlog.locator(".card").evaluateAll((cs) => cs.map((c) => (c as HTMLElement).dataset.id!));
    expect(ids).toHaveLength(100);
    // one at a time, so each live batch is small (a big one reloads the whole board)
    for (const id of ids) {
      const c = await call(ui.srv.url, "GET", `/cards/${id}`);
      await call(ui.srv.url, "PATCH", `/cards/${id}`, { version: c.version, status: "todo" }, "agent-1");
      await Bun.sleep(25);
    }
    const left = (await call(ui.srv.url, "GET", "/boards/main/counts")).counts.backlog;
    expect(left).toBeGreaterThan(0);
    // the lane holds a full page throughout (it refills), so wait for the count as well: the
    // last re-read may still be on its way when the cards already number 100
    const settled = await page.waitForFunction(([n, count]) => document.querySelectorAll('.lane[data-lane="backlog"] .card').length === n
      && document.querySelector('.lane[data-lane="backlog"] .lane-count')?.textContent === count, [Math.min(100, left), String(left)] as const, { timeout: 15_000 }).then(() => true, () => false);
    expect([settled, await backlog.locator(".lane-count").textContent()]).toEqual([true, String(left)]);
    await page.close();
  }, 60_000);

  test("Show more answered after a search began leaves the searched lane alone", async () => {
    const page = await ui.browser.page();
    await openBoard(page, "?board=main");
    // the Show more read (no q) answers slowly
    await page.route(/\/v1\/cards\?.*status=todo/, async (route) => {
      if (!route.request().url().includes("q=")) await Bun.sleep(1500);
      await route.continue().catch(() => {});
    });
    await lane(page, "todo").locator(".lane-more").click();
    await page.fill("#search", "Bug 17");
    await page.waitForTimeout(2500);
    const titles = await lane(page, "todo").locator(".card-title").allTextContents();
    expect(titles.length).toBeGreaterThan(0);
    for (const t of titles) expect(t).toContain("Bug 17");
    await page.close();
  }, T);

  test("a card the person moves stays in sight in its new lane, even past what that lane loaded", async () => {
    // Bug 1 (the oldest) in doing; todo holds over 100 newer bugs, and the bugs board sorts newest first
    const old = (await call(ui.srv.url, "GET", `/cards?q=${encodeURIComponent('"Bug 1"')}&type_id=bug&limit=200`)).items.find((c: any) => /^Bug 1( |$)/.test(c.title));
    let c = await call(ui.srv.url, "GET", `/cards/${old.id}`);
    for (const status of c.status === "backlog" ? ["todo", "doing"] : c.status === "todo" ? ["doing"] : []) {
      c = await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: c.version, status });
    }
    for (let i = 0; i < 5; i++) await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: `Newer bug ${i}`, status: "todo", fields: { severity: "minor", steps: "s" } });
    expect((await call(ui.srv.url, "GET", "/boards/bugs/counts")).counts.todo).toBeGreaterThan(100);
    const page = await ui.browser.page();
    await openBoard(page, "?board=bugs");
    await lane(page, "doing").locator(`.card[data-id="${c.id}"]`).focus();
    await page.keyboard.press("Shift+ArrowLeft");
    await lane(page, "todo").locator(`.card[data-id="${c.id}"]`).waitFor();
    await page.waitForTimeout(1500); // live events and refills that follow keep it
    expect(await lane(page, "todo").locator(`.card[data-id="${c.id}"]`).count()).toBe(1);
    expect((await call(ui.srv.url, "GET", `/cards/${c.id}`)).status).toBe("todo");
    await page.close();
  }, T);
});
