/**
 * Phone use: on a touch screen a quick swipe scrolls the lanes and a long press picks the
 * card up, so it can be dragged to another lane. Touches are sent through the DevTools
 * protocol (Input.dispatchTouchEvent) with touch emulation on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { CDPSession } from "playwright-core";
import { assertBinary, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { launch, type Browser } from "./browser.ts";
import { call } from "./seed.ts";

let srv: Server;
let browser: Browser;

beforeAll(async () => {
  assertBinary();
  srv = await serve(makeWorkspace());
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function touch(cdp: CDPSession, type: "touchStart" | "touchMove" | "touchEnd", x = 0, y = 0): Promise<unknown> {
  return cdp.send("Input.dispatchTouchEvent", { type, touchPoints: type === "touchEnd" ? [] : [{ x, y }] });
}

test("a long press then a drag moves the card; a swipe scrolls the lanes", async () => {
  const swiped = await call(srv.url, "POST", "/cards", { type_id: "task", title: "Swiped over", fields: { priority: "low" } });
  const moved = await call(srv.url, "POST", "/cards", { type_id: "task", title: "Picked up", fields: { priority: "low" } });
  const page = await browser.page(390, 844);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 1 });
  await page.goto(`${srv.url}/ui/`);
  await page.locator("body[data-ready]").waitFor();

  const b = (await page.locator(`.card[data-id="${moved.id}"]`).boundingBox())!;
  await touch(cdp, "touchStart", b.x + 40, b.y + 20);
  await sleep(500); // the long press
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

  expect((await call(srv.url, "GET", `/cards/${moved.id}`)).status).toBe("todo");
  expect((await call(srv.url, "GET", `/cards/${swiped.id}`)).status).toBe("backlog");
  await page.close();
}, 30_000);
