/**
 * The card detail of a busy card: the history says when it shows only the latest 500
 * entries and loads the older ones on request; a live comment adds one item to the list
 * and leaves the rest of the panel, and what is being typed, alone.
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const T = 30_000;

const ui = servedBoard();

const task = (title: string) => call(ui.srv.url, "POST", "/cards", { type_id: "task", title, status: "todo", fields: { priority: "normal" } });

async function openCard(page: Page, id: string): Promise<void> {
  await page.goto(`${ui.srv.url}/ui/?card=${id}`);
  await page.locator("body[data-ready]").waitFor();
  await page.locator("#detail .history li").first().waitFor();
}

describe.serial("card detail", () => {
  test("a long history says it shows the latest 500 entries and loads the older ones", async () => {
    let c = await task("Edited many times");
    for (let i = 1; i <= 519; i++) c = await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: c.version, title: `Edited many times (${i})` }, "agent-1");
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const d = page.locator("#detail");
    expect(await d.locator(".timeline li").count()).toBe(500);
    const note = d.locator(".history-more");
    expect(await note.textContent()).toBe("Showing the latest 500 entries; any older ones are not shown. Load older entries");
    await note.locator("button").click();
    await page.waitForFunction(() => document.querySelectorAll("#detail .timeline li").length === 520);
    expect(await note.isHidden()).toBe(true);
    expect(await d.locator(".timeline li").first().textContent()).toContain("renamed to \"Edited many times (519)\"");
    expect(await d.locator(".timeline li").last().textContent()).toContain("created task");
    // live entries still arrive once older ones are shown
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: "after the older ones" }, "agent-2");
    await page.waitForFunction(() => document.querySelectorAll("#detail .timeline li").length === 521);
    expect(await d.locator(".timeline li").first().textContent()).toContain("commented");
    await page.close();
  }, T);

  test("a live comment adds one item: the other comments, the fields and the typed comment stay", async () => {
    const c = await task("Talked about");
    for (const body of ["first", "second **bold**", "third"]) await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body });
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const d = page.locator("#detail");
    await d.locator(".comment-form textarea").fill("half-written");
    await d.locator(".comment-form textarea").focus();
    await page.evaluate(() => {
      for (const el of document.querySelectorAll("#detail .comment, #detail .detail-section.fields, #detail .comment-form")) (el as any).kept = true;
    });
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: "a fourth, from an agent" }, "agent-1");
    await d.locator(".comment", { hasText: "a fourth, from an agent" }).waitFor();
    expect(await d.locator(".comments h3").textContent()).toBe("Comments (4)");
    expect(await page.evaluate(() => [...document.querySelectorAll("#detail .comment, #detail .detail-section.fields, #detail .comment-form")].map((el) => Boolean((el as any).kept))))
      .toEqual([true, true, true, true, false, true]); // fields, three comments, the new one, the form
    expect(await d.locator(".comment-form textarea").inputValue()).toBe("half-written");
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA");
    await page.close();
  }, T);

  test("a title of hundreds of characters keeps the panel usable: the sticky head stays short, Delete and the comment box are reachable", async () => {
    const c = await task(`T1 ${"W".repeat(600)}`);
    const page = await ui.browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await openCard(page, c.id);
    const head = await page.locator("#detail .detail-head").boundingBox();
    expect(head!.height).toBeLessThan(300); // before: 894 of 900 px, covering all below it
    for (const sel of ["#detail-delete", "#detail .comment-form textarea"]) {
      const el = page.locator(sel);
      await el.scrollIntoViewIfNeeded();
      // what is at its centre is itself, not the sticky head drawn over it
      expect([sel, await el.evaluate((node) => {
        const r = node.getBoundingClientRect();
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return top === node || node.contains(top);
      })]).toEqual([sel, true]);
    }
    await page.close();
  }, T);
});
