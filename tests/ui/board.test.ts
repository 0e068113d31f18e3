/**
 * The board UI in headless Chromium against the compiled binary: lanes and cards, drag
 * moves (accepted and refused), live cards from the CLI, the create form, the detail
 * panel, filters, search and keys. Screenshots: see SHOTS.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { assertBinary, run, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace, ROOT } from "../helpers/workspace.ts";
import { launch, pageErrors, type Browser } from "./browser.ts";
import { call, seedDemo, type Seeded } from "./seed.ts";

/** Screenshots go to a temp dir; `CARDS_SCREENSHOTS=docs/screenshots` refreshes the ones kept in the repository. */
const SHOTS = process.env.CARDS_SCREENSHOTS ? resolve(ROOT, process.env.CARDS_SCREENSHOTS) : join(tmpdir(), "cards-ui-screenshots");
/** per test: a browser page, a few round trips and waits of up to a few seconds */
const T = 30_000;
let dir: string;
let srv: Server;
let browser: Browser;
let s: Seeded;

beforeAll(async () => {
  assertBinary();
  dir = makeWorkspace();
  srv = await serve(dir);
  s = await seedDemo(srv.url);
  browser = await launch();
  mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
});

async function openBoard(page: Page, query = ""): Promise<void> {
  await page.goto(`${srv.url}/ui/${query}`);
  await page.locator("body[data-ready]").waitFor();
}

const cardIn = (page: Page, lane: string, id: string) => page.locator(`.lane[data-lane="${lane}"] .card[data-id="${id}"]`);

/** Drags with real mouse events, in steps, the way a person would. */
async function drag(page: Page, id: string, toLane: string): Promise<void> {
  const from = await page.locator(`.card[data-id="${id}"]`).boundingBox();
  const to = await page.locator(`.lane[data-lane="${toLane}"] .lane-cards`).boundingBox();
  if (!from || !to) throw new Error("card or lane not visible");
  await page.mouse.move(from.x + from.width / 2, from.y + 12);
  await page.mouse.down();
  await page.mouse.move(to.x + to.width / 2, to.y + 40, { steps: 8 });
  await page.mouse.up();
}

/** Picks a card up and holds it over the board, until the lanes are marked for the drag. */
async function pickUp(page: Page, id: string): Promise<void> {
  const from = await page.locator(`.card[data-id="${id}"]`).boundingBox();
  if (!from) throw new Error("card not visible");
  await page.mouse.move(from.x + from.width / 2, from.y + 12);
  await page.mouse.down();
  await page.mouse.move(from.x + from.width / 2 - 60, from.y + 40, { steps: 6 });
  await page.locator(".lane.drop-disallowed").first().waitFor();
}

describe.serial("board UI", () => {
  test("opens the default board: lanes in order, card faces, WIP limits, blocked badge", async () => {
    const page = await browser.page();
    const errors = pageErrors(page);
    await openBoard(page);
    expect(await page.locator(".lane").evaluateAll((ls) => ls.map((l) => (l as HTMLElement).dataset.lane))).toEqual(["backlog", "todo", "doing", "review", "done"]);
    expect(await page.locator("#board-picker option").first().getAttribute("value")).toBe("main");
    const rate = cardIn(page, "doing", s.rate.id);
    await rate.waitFor();
    expect(await rate.locator(".card-title").textContent()).toBe("Add rate limiting to the public API");
    expect(await rate.locator(".short-id").textContent()).toBe(s.rate.id.slice(5, 13));
    expect(await rate.locator(".blocked-badge").count()).toBe(1);
    expect(await rate.locator(".owner").textContent()).toContain("Agent 1");
    expect(await rate.locator(".tag").allTextContents()).toEqual(["backend", "security"]);
    expect(await rate.locator('.badge[data-value="high"]').count()).toBe(1); // card_preview: priority
    expect(await rate.evaluate((el) => getComputedStyle(el).borderLeftColor)).toBe("rgb(217, 130, 43)"); // style_field theme
    const todo = await call(srv.url, "GET", "/cards?board_id=main&status=todo&sort=-updated_at"); // lane_sort
    expect(await page.locator('.lane[data-lane="todo"] .card').evaluateAll((cs) => cs.map((c) => (c as HTMLElement).dataset.id)))
      .toEqual(todo.items.map((c: any) => c.id));
    const review = page.locator('.lane[data-lane="review"]');
    expect(await review.getAttribute("class")).toContain("over-limit");
    expect(await review.locator(".lane-count").textContent()).toBe("3 / 2");
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--accent").trim())).toBe("#3050a0");
    await page.screenshot({ path: join(SHOTS, "board.png") });
    expect(errors).toEqual([]);
    await page.close();
  }, T);

  test("dragging a card to an allowed lane changes its status", async () => {
    const page = await browser.page();
    await openBoard(page);
    await drag(page, s.guide.id, "todo");
    await cardIn(page, "todo", s.guide.id).waitFor();
    await page.locator(".toast.error").waitFor({ state: "detached", timeout: 300 }).catch(() => undefined);
    const card = await call(srv.url, "GET", `/cards/${s.guide.id}`);
    expect(card.status).toBe("todo");
    expect(card.version).toBe(2);
    await page.close();
  }, T);

  test("while dragging, a lane the card's type does not allow is marked disallowed", async () => {
    const page = await browser.page();
    // in todo, the board's transitions allow backlog; the review type's allowed_columns do not
    const r = await call(srv.url, "POST", "/cards", { type_id: "review", title: "review in todo", status: "todo", fields: { reviewers: ["ada"] } });
    await openBoard(page);
    await pickUp(page, r.id);
    expect(await page.locator('.lane[data-lane="backlog"]').getAttribute("class")).toContain("drop-disallowed");
    expect(await page.locator('.lane[data-lane="doing"]').getAttribute("class")).toContain("drop-allowed");
    await page.keyboard.press("Escape");
    await page.mouse.up();
    expect((await call(srv.url, "GET", `/cards/${r.id}`)).status).toBe("todo");
    await call(srv.url, "DELETE", `/cards/${r.id}`);
    await page.close();
  }, T);

  test("a drag is judged against the card as it was picked up: an agent's move meanwhile is a conflict naming them, not undone (before: the drop moved it back)", async () => {
    const page = await browser.page();
    const c = await call(srv.url, "POST", "/cards", { type_id: "task", title: "moved under the drag", status: "backlog" });
    await openBoard(page);
    const from = await page.locator(`.card[data-id="${c.id}"]`).boundingBox();
    const to = await page.locator('.lane[data-lane="todo"] .lane-cards').boundingBox();
    if (!from || !to) throw new Error("card or lane not visible");
    await page.mouse.move(from.x + from.width / 2, from.y + 12);
    await page.mouse.down();
    await page.mouse.move(from.x + from.width / 2 + 20, from.y + 30, { steps: 4 }); // the drag has started
    // an agent moves it on while the person holds it
    const v2 = await call(srv.url, "PATCH", `/cards/${c.id}`, { version: 1, status: "todo" }, "agent-1");
    await call(srv.url, "PATCH", `/cards/${c.id}`, { version: v2.version, status: "doing" }, "agent-1");
    await page.locator(`.lane[data-lane="doing"] .card[data-id="${c.id}"]`).waitFor({ state: "attached" });
    await page.mouse.move(to.x + to.width / 2, to.y + 40, { steps: 6 });
    await page.mouse.up();
    const toast = page.locator(".toast.error", { hasText: "agent-1" });
    await toast.waitFor();
    expect(await toast.textContent()).toContain("changed this card meanwhile");
    const now = await call(srv.url, "GET", `/cards/${c.id}`);
    expect([now.status, now.version]).toEqual(["doing", 3]);
    await cardIn(page, "doing", c.id).waitFor();
    await page.close();
  }, T);

  test("a refused move snaps back and shows the error with its valid options", async () => {
    const page = await browser.page();
    await openBoard(page);
    await drag(page, s.perf.id, "done");
    const toast = page.locator(".toast.error", { hasText: "does not allow that move" });
    await toast.waitFor();
    expect(await toast.getAttribute("data-error")).toBe("transition_illegal");
    // the columns by name, and no advice about a force the board has no control for
    expect(await toast.locator(".valid-options").textContent()).toBe("From here a card can move to: To do.");
    expect(await toast.textContent()).not.toContain("force");
    await cardIn(page, "backlog", s.perf.id).waitFor();
    expect(await cardIn(page, "done", s.perf.id).count()).toBe(0);
    expect((await call(srv.url, "GET", `/cards/${s.perf.id}`)).status).toBe("backlog");
    await page.close();
  }, T);

  test("a column the transitions map leaves out allows no move: no lane is offered, no status can be picked (before: every one was)", async () => {
    // main's graph without an entry for review: the server refuses every move out of it
    const ws = makeWorkspace((f) => { delete (f["definitions/boards/main.json"] as any).transitions.review; });
    const other = await serve(ws);
    const page = await browser.page();
    try {
      const c = await call(other.url, "POST", "/cards", { type_id: "task", title: "stuck in review", status: "review" });
      const refused = await fetch(`${other.url}/v1/cards/${c.id}`, { method: "PATCH", headers: { "content-type": "application/json", "x-service-actor": "ada" }, body: JSON.stringify({ version: 1, status: "done" }) });
      expect(((await refused.json()) as any).error).toBe("transition_illegal");
      await page.goto(`${other.url}/ui/`);
      await page.locator("body[data-ready]").waitFor();
      await pickUp(page, c.id);
      for (const lane of ["backlog", "todo", "doing", "done"]) {
        expect([lane, await page.locator(`.lane[data-lane="${lane}"]`).getAttribute("class")]).toEqual([lane, expect.stringContaining("drop-disallowed")]);
      }
      await page.keyboard.press("Escape");
      await page.mouse.up();
      await page.goto(`${other.url}/ui/?card=${c.id}`);
      await page.locator("#detail-status").waitFor();
      const options = await page.locator("#detail-status option").evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, (o as HTMLOptionElement).disabled]));
      expect(options).toEqual([["backlog", true], ["todo", true], ["doing", true], ["review", false], ["done", true]]);
    } finally {
      await page.close();
      await other.stop();
    }
  }, T);

  test("with no default board declared, a card moves by the graph of the first board by id that shows it, as the server judges (not GET /workspace's key order)", async () => {
    // boards "10" (main's enforced graph) and "2" (no graph): ids a JSON object lists "2" first
    const ws = makeWorkspace((f) => {
      const main = f["definitions/boards/main.json"] as any;
      delete f["definitions/boards/main.json"];
      delete (f["definitions/workspace.json"] as any).settings.default_board;
      f["definitions/boards/10.json"] = { ...main, id: "10" };
      const { transitions: _t, ...free } = main;
      f["definitions/boards/2.json"] = { ...free, id: "2", settings: { enforce_transitions: false } };
      (f["definitions/views/triage.json"] as any).board_id = "bugs";
    });
    const other = await serve(ws);
    const page = await browser.page();
    try {
      const c = await call(other.url, "POST", "/cards", { type_id: "task", title: "governed by 10", status: "backlog" });
      await page.goto(`${other.url}/ui/?board=2&card=${c.id}`);
      await page.locator("#detail-status").waitFor();
      const options = await page.locator("#detail-status option").evaluateAll((os) => os.filter((o) => !(o as HTMLOptionElement).disabled).map((o) => (o as HTMLOptionElement).value));
      // board 10's graph: from backlog only to todo, which is what the server takes
      expect(options).toEqual(["backlog", "todo"]);
      const refused = await fetch(`${other.url}/v1/cards/${c.id}`, { method: "PATCH", headers: { "content-type": "application/json", "x-service-actor": "ada" }, body: JSON.stringify({ version: 1, status: "doing" }) });
      expect(((await refused.json()) as any).error).toBe("transition_illegal");
    } finally {
      await page.close();
      await other.stop();
    }
  }, T);

  test("a card created through the CLI appears live within a second", async () => {
    const page = await browser.page();
    await openBoard(page);
    await page.locator('#live-status[data-state="live"]').waitFor();
    const r = run(["cards", "create", "--type", "task", "--title", "Made by an agent on the CLI", "--status", "todo", "--fields", '{"priority":"urgent"}'],
      { env: { CARDS_DIR: dir, CARDS_ACTOR: "agent-2" } });
    expect(r.code).toBe(0);
    const t0 = Date.now();
    await cardIn(page, "todo", r.json.id).waitFor({ timeout: 3000 });
    const ms = Date.now() - t0;
    console.log(`live: CLI card on the board ${ms} ms after the CLI exited`);
    expect(ms).toBeLessThan(1000);
    // and a change made elsewhere moves it live
    run(["cards", "patch", r.json.id, "--version", "1", "--status", "doing"], { env: { CARDS_DIR: dir, CARDS_ACTOR: "agent-2" } });
    await cardIn(page, "doing", r.json.id).waitFor({ timeout: 3000 });
    await page.close();
  }, T);

  test("creating a card through the form", async () => {
    const page = await browser.page();
    await openBoard(page);
    await page.locator("#new-card").click();
    const dlg = page.locator("dialog.create-dialog");
    await dlg.waitFor();
    await dlg.locator("#new-type").selectOption("bug");
    await dlg.locator("#new-title").fill("Board forgets the filter on reload");
    await dlg.locator('.form-field[data-field="severity"] select').selectOption("major");
    await dlg.locator("button[type=submit]").click();
    const err = dlg.locator('.form-field[data-field="steps"] .field-error', { hasText: "steps is required" });
    await err.waitFor(); // the server's refusal, next to the field
    await dlg.locator('.form-field[data-field="steps"] textarea').fill("1. Pick **mine**\n2. Reload");
    await dlg.locator('.form-field[data-field="tags"] input[value="frontend"]').check();
    await dlg.locator("button[type=submit]").click();
    await dlg.waitFor({ state: "detached" });
    const face = page.locator('.lane[data-lane="backlog"] .card', { hasText: "Board forgets the filter on reload" });
    await face.waitFor();
    const id = await face.getAttribute("data-id");
    const card = await call(srv.url, "GET", `/cards/${id}`);
    expect(card).toMatchObject({ type_id: "bug", status: "backlog", tags: ["frontend"], created_by: "ada", fields: { severity: "major", steps: "1. Pick **mine**\n2. Reload" } });
    await page.close();
  }, T);

  test("card detail: fields by type, markdown, entries, links both ways, comments, history", async () => {
    const page = await browser.page(1440, 2000);
    const errors = pageErrors(page);
    await openBoard(page);
    await page.locator(`.card[data-id="${s.rate.id}"]`).click();
    const d = page.locator("#detail");
    await d.locator(".history li").first().waitFor();
    expect(await d.locator("#detail-title").textContent()).toBe("Add rate limiting to the public API");
    expect(await d.locator('[data-field="description"] .md strong').first().textContent()).toBe("token bucket");
    expect(await d.locator('[data-field="description"] .md a').getAttribute("href")).toBe("https://example.com/docs/api");
    expect(await d.locator('[data-field="branch"] code').textContent()).toBe("feat/rate-limit");
    expect(await d.locator('[data-field="priority"] .badge').textContent()).toContain("high");
    expect(await d.locator(".field-evidence .feed li").count()).toBe(2);
    expect(await d.locator(".link-list.outgoing li").textContent()).toContain(s.cache.id.slice(5, 13));
    expect(await d.locator(".link-list.incoming li").textContent()).toContain(s.review.id.slice(5, 13));
    expect(await d.locator(".comment").count()).toBe(2);
    expect(await d.locator(".history li").count()).toBeGreaterThanOrEqual(6);
    expect(new URL(page.url()).searchParams.get("card")).toBe(s.rate.id);
    await page.screenshot({ path: join(SHOTS, "card.png") });
    expect(errors).toEqual([]);
    await page.close();
  }, T);

  test("edits from the detail: owner, comment, link, fields", async () => {
    const page = await browser.page();
    await openBoard(page, `?card=${s.flaky.id}`);
    const d = page.locator("#detail");
    await d.locator("#detail-owner").selectOption("agent-2");
    await cardIn(page, "todo", s.flaky.id).locator(".owner", { hasText: "Agent 2" }).waitFor();
    await d.locator(".comment-form textarea").fill("Reproduced with `--concurrent`.");
    await d.locator(".comment-form button").click();
    await d.locator(".comment code", { hasText: "--concurrent" }).waitFor();
    await d.locator(".links summary").click();
    await d.locator('.link-form select[name="type_id"]').selectOption("related");
    await d.locator('.link-form input[name="target"]').fill(s.login.id);
    await d.locator(".link-form button").click();
    await d.locator(".link-list.outgoing li", { hasText: s.login.id.slice(5, 13) }).waitFor();
    await d.locator("#detail-edit").click();
    await d.locator('.edit-form .form-field[data-field="priority"] select').selectOption("low");
    await d.locator('.edit-form .form-field[data-field="estimate_hours"] input').fill("3");
    await d.locator(".edit-form button[type=submit]").click();
    await d.locator('[data-field="estimate_hours"]', { hasText: "3" }).waitFor();
    const card = await call(srv.url, "GET", `/cards/${s.flaky.id}`);
    expect(card).toMatchObject({ owner: "agent-2", fields: { priority: "low", estimate_hours: 3 } });
    expect(card.links.map((l: any) => l.target)).toEqual([s.login.id]);
    // a live change re-renders the panel but keeps what is being typed
    await d.locator(".comment-form textarea").fill("half-written");
    await call(srv.url, "PATCH", `/cards/${s.flaky.id}`, { version: card.version, tags: ["flaky"] }, "agent-1");
    await d.locator(".detail-kicker", { hasText: `v${card.version + 1}` }).waitFor();
    expect(await d.locator(".comment-form textarea").inputValue()).toBe("half-written");
    // Esc keeps the half-written comment; once it is cleared, Esc closes the card
    await d.locator(".comment-form textarea").focus();
    await page.keyboard.press("Escape");
    await page.waitForTimeout(100);
    expect(await d.isVisible()).toBe(true);
    expect(await d.locator(".comment-form textarea").inputValue()).toBe("half-written");
    await d.locator(".comment-form textarea").fill("");
    await page.keyboard.press("Escape");
    await d.waitFor({ state: "hidden" });
    await page.close();
  }, T);

  test("an edit that meets a concurrent change keeps what was typed; the next Save applies it over the new version; Esc does not discard it", async () => {
    const page = await browser.page();
    const c = await call(srv.url, "POST", "/cards", { type_id: "task", title: "edited twice", status: "todo", fields: { priority: "normal" } });
    await openBoard(page, `?card=${c.id}`);
    const d = page.locator("#detail");
    await d.locator("#detail-edit").click();
    await d.locator("#edit-title").fill("my title");
    // Esc while typing leaves the form open with the typed text
    await page.keyboard.press("Escape");
    expect(await d.locator("#edit-title").inputValue()).toBe("my title");
    // meanwhile an agent changes the title too: the same key, so a conflict
    await call(srv.url, "PATCH", `/cards/${c.id}`, { version: 1, title: "agent's title" }, "agent-1");
    await d.locator(".edit-form button[type=submit]").click();
    const note = d.locator(".edit-form .form-error", { hasText: "Someone (agent-1) changed this card while you edited it" });
    await note.waitFor();
    expect(await note.textContent()).toContain("now v2");
    expect(await d.locator(".detail-kicker").textContent()).toContain("v2");
    expect(await d.locator("#edit-title").inputValue()).toBe("my title");
    await d.locator(".edit-form button[type=submit]").click();
    await d.locator(".detail-kicker", { hasText: "v3" }).waitFor();
    expect(await call(srv.url, "GET", `/cards/${c.id}`)).toMatchObject({ title: "my title", version: 3 });

    // an agent's change to another field meanwhile is no conflict: the Save lands over it, and it survives
    await d.locator("#detail-edit").click();
    await d.locator("#edit-title").fill("my second title");
    await call(srv.url, "PATCH", `/cards/${c.id}`, { version: 3, fields: { priority: "high" } }, "agent-1");
    await d.locator(".edit-form button[type=submit]").click();
    await d.locator(".detail-kicker", { hasText: "v5" }).waitFor();
    expect(await call(srv.url, "GET", `/cards/${c.id}`)).toMatchObject({ title: "my second title", version: 5, fields: { priority: "high" } });
    await page.close();
  }, T);

  test("artifacts: upload bytes to a local artifact field, download them from the link; uri artifacts link out", async () => {
    const page = await browser.page();
    await openBoard(page, `?card=${s.guide.id}`);
    const out = page.locator('#detail dd[data-field="output"]');
    await out.locator("summary").click();
    await out.locator("input[type=file]").setInputFiles({ name: "result.txt", mimeType: "text/plain", buffer: Buffer.from("hello artifact\n") });
    await out.locator("button[type=submit]").click();
    const link = page.locator('#detail dd[data-field="output"] .artifact a');
    await link.waitFor();
    const href = (await link.getAttribute("href"))!;
    expect(href).toMatch(/^\/v1\/artifacts\/sha256\//);
    expect(await (await fetch(`${srv.url}${href}`)).text()).toBe("hello artifact\n");
    const bug = await call(srv.url, "POST", "/cards", { type_id: "bug", title: "Nightly build fails", fields: { severity: "minor", steps: "Run nightly.", logs: { uri: "https://ci.example.com/runs/42" } } });
    await openBoard(page, `?card=${bug.id}`);
    expect(await page.locator('#detail dd[data-field="logs"] a').first().getAttribute("href")).toBe("https://ci.example.com/runs/42");
    await page.close();
  }, T);

  test("saved filter chips resolve `me` to the chosen actor; search narrows the board", async () => {
    const page = await browser.page();
    await openBoard(page);
    await page.locator('.chip[data-filter="mine"]').click();
    await page.locator('.card').first().waitFor();
    await page.waitForFunction(() => document.querySelectorAll(".card").length === 1);
    expect(await page.locator(".card").getAttribute("data-id")).toBe(s.keys.id);
    await page.locator("#actor").selectOption("agent-1");
    await page.waitForFunction((ids) => {
      const shown = [...document.querySelectorAll<HTMLElement>(".card")].map((c) => c.dataset.id).sort();
      return JSON.stringify(shown) === JSON.stringify(ids);
    }, [s.rate.id, s.cache.id].sort());
    await page.locator('.chip[data-filter=""]').click();
    await page.locator("#search").fill("emoji");
    await page.waitForFunction(() => document.querySelectorAll(".card").length === 1);
    expect(await page.locator(".card").getAttribute("data-id")).toBe(s.crash.id);
    expect(new URL(page.url()).searchParams.get("q")).toBe("emoji");
    await page.locator("#actor").selectOption("ada"); // the choice is kept in local storage for later pages
    await page.close();
  }, T);

  test("keyboard: arrows between cards and lanes, Enter opens, Escape closes, Shift+arrow moves", async () => {
    const page = await browser.page();
    await openBoard(page, "?board=bugs");
    await page.locator(".card").first().waitFor();
    await page.locator('.card[tabindex="0"]').focus();
    const focused = () => page.evaluate(() => (document.activeElement as HTMLElement).dataset.id ?? "");
    const laneOf = (id: string) => page.locator(`.card[data-id="${id}"]`).evaluate((el) => el.closest<HTMLElement>(".lane")!.dataset.lane!);
    const order = ["backlog", "todo", "doing", "review", "done"];
    const first = await focused();
    await page.keyboard.press("ArrowRight");
    const second = await focused();
    expect(second).not.toBe(first);
    const lane = await laneOf(second);
    expect(order.indexOf(lane)).toBeGreaterThan(order.indexOf(await laneOf(first)));
    await page.keyboard.press("Enter");
    await page.locator("#detail-title").waitFor();
    await page.keyboard.press("Escape");
    await page.locator("#detail").waitFor({ state: "hidden" });
    expect(await focused()).toBe(second);
    await page.keyboard.press("Shift+ArrowRight"); // the bugs board enforces no transitions
    const next = order[order.indexOf(lane) + 1]!;
    await page.locator(`.lane[data-lane="${next}"] .card[data-id="${second}"]`).waitFor();
    expect(await focused()).toBe(second);
    await page.close();
  }, T);

  test("phone width: lanes snap side by side, nothing overflows the page", async () => {
    const page = await browser.page(390, 844);
    await openBoard(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const w = await page.locator(".lane").first().evaluate((el) => el.getBoundingClientRect().width);
    expect(w).toBeGreaterThan(300);
    await page.screenshot({ path: join(SHOTS, "board-phone.png") });
    await page.locator(`.card[data-id="${s.guide.id}"]`).scrollIntoViewIfNeeded();
    await page.locator(`.card[data-id="${s.guide.id}"]`).click();
    const box = await page.locator("#detail").boundingBox();
    expect(box?.width).toBe(390);
    await page.close();
  }, T);
});
