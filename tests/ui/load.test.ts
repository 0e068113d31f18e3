/**
 * Page load with 500 cards on the board: navigation start to every lane rendered, measured
 * in the page (window.cardsReady), cold and warm. The issue asks for under one second.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { assertBinary, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { launch, pageErrors, type Browser } from "./browser.ts";
import { seedMany } from "./seed.ts";

const CARDS = 500;
let srv: Server;
let browser: Browser;

beforeAll(async () => {
  assertBinary();
  srv = await serve(makeWorkspace());
  await seedMany(srv.url, CARDS);
  browser = await launch();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
});

test(`the board with ${CARDS} cards loads in under a second`, async () => {
  const times: number[] = [];
  let marks = "";
  for (let i = 0; i < 3; i++) {
    const page = await browser.page();
    const errors = pageErrors(page);
    await page.goto(`${srv.url}/ui/?board=main`);
    await page.locator("body[data-ready]").waitFor({ timeout: 10_000 });
    times.push(await page.evaluate(() => Math.round(window.cardsReady ?? NaN)));
    if (i === 0) marks = await page.evaluate(() => performance.getEntriesByType("mark").map((m) => `${m.name.replace("cards:", "")} ${Math.round(m.startTime)}`).join(", "));
    expect(await page.locator(".card").count()).toBe(CARDS);
    expect(errors).toEqual([]);
    await page.close();
  }
  console.log(`page load with ${CARDS} cards (navigation start to all lanes drawn): cold ${times[0]} ms, warm ${times.slice(1).join(" / ")} ms (cold, ms after navigation start: ${marks})`);
  expect(Math.max(...times)).toBeLessThan(1000);
}, 60_000);
