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

  test("a card with many comments opens with the newest 50; new ones join below; the button shows the rest", async () => {
    const c = await task("Discussed at length");
    for (let i = 0; i < 70; i += 10) await Promise.all(Array.from({ length: 10 }, (_, k) => call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: `note ${String(i + k).padStart(2, "0")}` })));
    const all: string[] = (await call(ui.srv.url, "GET", `/cards/${c.id}`)).comments.map((x: any) => x.body);
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const d = page.locator("#detail");
    const bodies = () => d.locator(".comments-list > li .md").allTextContents();
    expect(await bodies()).toEqual(all.slice(20));
    expect(await d.locator(".comments h3").textContent()).toBe("Comments (70)");
    const more = d.locator(".comments-more");
    expect(await more.textContent()).toBe("Showing the newest 50 of 70 comments. Show 20 earlier comments");
    // a live comment joins the shown ones; the button keeps the focus and its count
    await more.locator("button").focus();
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: "from an agent" }, "agent-1");
    await d.locator(".comment", { hasText: "from an agent" }).waitFor();
    expect(await more.textContent()).toBe("Showing the newest 51 of 71 comments. Show 20 earlier comments");
    expect(await page.evaluate(() => document.activeElement?.classList.contains("comments-earlier"))).toBe(true);
    await page.keyboard.press("Enter");
    expect(await bodies()).toEqual([...all, "from an agent"]);
    expect(await more.isHidden()).toBe(true);
    // the first comment as stored (posted ten at a time, so not always "note 00")
    expect(await page.evaluate(() => document.activeElement?.closest("li")?.querySelector(".md")?.textContent)).toBe(all[0]);
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
