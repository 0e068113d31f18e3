/**
 * Phone use: on a touch screen a quick swipe scrolls the lanes and a long press picks the
 * card up, so it can be dragged to another lane, however far: holding it at the board's
 * edge scrolls lane after lane (lane snapping is off while a drag runs). Touches are sent through the DevTools
 * protocol (Input.dispatchTouchEvent) with touch emulation on.
 */
import { expect, test } from "bun:test";
import type { CDPSession } from "playwright-core";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const ui = servedBoard((files: any) => {
  // no enforced transitions, so a card may be carried to any lane
  files["definitions/boards/main.json"].settings.enforce_transitions = false;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function touch(cdp: CDPSession, type: "touchStart" | "touchMove" | "touchEnd", x = 0, y = 0): Promise<unknown> {
  return cdp.send("Input.dispatchTouchEvent", { type, touchPoints: type === "touchEnd" ? [] : [{ x, y }] });
}

test("a long press then a drag moves the card; a swipe scrolls the lanes", async () => {
  const swiped = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Swiped over", fields: { priority: "low" } });
  const moved = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Picked up", fields: { priority: "low" } });
  const page = await ui.browser.page(390, 844);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 1 });
  await page.goto(`${ui.srv.url}/ui/`);
  await page.locator("body[data-ready]").waitFor();

  const b = (await page.locator(`.card[data-id="${moved.id}"]`).boundingBox())!;
  await touch(cdp, "touchStart", b.x + 40, b.y + 20);
  await page.locator("body.is-dragging").waitFor(); // the long press took the card (a fixed wait lost to a busy page)
  for (let i = 1; i <= 10; i++) await touch(cdp, "touchMove", b.x + 40 + i * 30, b.y + 30);
  await touch(cdp, "touchEnd");
  await page.locator(`.lane[data-lane="todo"] .card[data-id="${moved.id}"]`).waitFor();

  await page.evaluate(() => { document.querySelector("#board")!.scrollLeft = 0; });
  const before = await page.evaluate(() => document.querySelector("#board")!.scrollLeft);
  const a = (await page.locator(`.card[data-id="${swiped.id}"]`).boundingBox())!;
  await touch(cdp, "touchStart", a.x + 300, a.y + 20);
  for (let i = 1; i <= 10; i++) await touch(cdp, "touchMove", a.x + 300 - i * 25, a.y + 24);
  await touch(cdp, "touchEnd");
  await page.waitForFunction((x) => document.querySelector("#board")!.scrollLeft > x + 100, before);

  expect((await call(ui.srv.url, "GET", `/cards/${moved.id}`)).status).toBe("todo");
  expect((await call(ui.srv.url, "GET", `/cards/${swiped.id}`)).status).toBe("backlog");
  await page.close();
}, 30_000);

test("a dragged card held at the edge scrolls past the next lane; snapping comes back after the drop", async () => {
  const far = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Carried far", fields: { priority: "low" } });
  const page = await ui.browser.page(390, 844);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 1 });
  await page.goto(`${ui.srv.url}/ui/`);
  await page.locator("body[data-ready]").waitFor();
  const snap = () => page.evaluate(() => getComputedStyle(document.querySelector("#board")!).scrollSnapType);
  expect(await snap()).toBe("x mandatory");
  const lane = await page.locator(".lane").first().evaluate((el) => el.getBoundingClientRect().width);

  const b = (await page.locator(`.card[data-id="${far.id}"]`).boundingBox())!;
  await touch(cdp, "touchStart", b.x + 40, b.y + 20);
  await page.locator("body.is-dragging").waitFor(); // the long press took the card
  // to the right edge, then hold the finger still there: the board scrolls on by itself
  for (let i = 1; i <= 6; i++) await touch(cdp, "touchMove", b.x + 40 + i * 50, b.y + 30);
  await touch(cdp, "touchMove", 382, b.y + 30);
  await page.waitForFunction((w) => document.querySelector("#board")!.scrollLeft > w * 2, lane, { timeout: 5000 }); // before: only while the finger moved
  expect(await snap()).toBe("none");
  await touch(cdp, "touchEnd");

  await page.waitForFunction((id) => {
    const lane = document.querySelector(`.card[data-id="${id}"]`)?.closest<HTMLElement>(".lane")?.dataset.lane;
    return lane === "review" || lane === "done";
  }, far.id);
  let status = "backlog"; // the move is shown at once; the server's answer follows
  for (let i = 0; i < 50 && status === "backlog"; i++, await sleep(50)) status = (await call(ui.srv.url, "GET", `/cards/${far.id}`)).status;
  expect(["review", "done"]).toContain(status);
  expect(await snap()).toBe("x mandatory");
  await page.close();
}, 30_000);
