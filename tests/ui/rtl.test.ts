/**
 * Text in right-to-left scripts: a title, an excerpt and a comment take their direction
 * from their own first letter (CSS unicode-bidi: plaintext), so a Hebrew title's closing
 * "!" and its number sit where its writer put them, at the left end, not the right.
 */
import { describe, expect, test } from "bun:test";
import type { Locator } from "playwright-core";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const T = 30_000;

const ui = servedBoard((files: any) => { files["definitions/boards/main.json"].presentation.card_preview.task.push("description"); });

/** True when the last character of the element's text is drawn left of its first. */
async function readsRightToLeft(el: Locator): Promise<boolean> {
  return await el.evaluate((node) => {
    const text = node.firstChild?.nodeType === Node.TEXT_NODE ? node.firstChild : node.querySelector("p")?.firstChild ?? node.firstChild;
    if (!text || !text.textContent) throw new Error("no text");
    const at = (i: number) => { const r = document.createRange(); r.setStart(text, i); r.setEnd(text, i + 1); return r.getBoundingClientRect().left; };
    return at(text.textContent.length - 1) < at(0);
  });
}

describe.serial("right-to-left text", () => {
  test("a Hebrew title, excerpt and comment read right to left, each with its closing punctuation at its left end; English stays left to right", async () => {
    const he = "שלום עולם 42!";
    const t = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: he, status: "todo", fields: { priority: "normal", description: he } });
    await call(ui.srv.url, "POST", `/cards/${t.id}/comments`, { body: he });
    const en = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Hello world 42!", status: "todo", fields: { priority: "normal" } });
    const page = await ui.browser.page();
    await page.goto(`${ui.srv.url}/ui/?card=${t.id}`);
    await page.locator("body[data-ready]").waitFor();
    const face = page.locator(`.card[data-id="${t.id}"]`);
    expect({
      title: await readsRightToLeft(face.locator(".card-title")),
      excerpt: await readsRightToLeft(face.locator(".excerpt")),
      detail: await readsRightToLeft(page.locator("#detail-title")),
      comment: await readsRightToLeft(page.locator("#detail .comment .md").first()),
      english: await readsRightToLeft(page.locator(`.card[data-id="${en.id}"] .card-title`)),
    }).toEqual({ title: true, excerpt: true, detail: true, comment: true, english: false });
    await page.close();
  }, T);
});
