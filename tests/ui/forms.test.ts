/**
 * Forms in the card detail and the New card dialog: Esc never throws typed input away, a
 * new Save clears the last one's errors, a conflict says who changed the card, the Status
 * picker offers only the moves the board allows, and comments show pictures.
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const T = 30_000;

const ui = servedBoard();

const task = (title: string, status = "backlog") =>
  call(ui.srv.url, "POST", "/cards", { type_id: "task", title, status, fields: { priority: "normal" } });

async function openCard(page: Page, id: string): Promise<void> {
  await page.goto(`${ui.srv.url}/ui/?card=${id}`);
  await page.locator("body[data-ready]").waitFor();
  await page.locator("#detail .history").waitFor();
}

/** Presses Esc twice (the browser allows refusing a dialog's cancel once per user activation). */
async function escTwice(page: Page): Promise<void> {
  await page.keyboard.press("Escape");
  await page.keyboard.press("Escape");
  await page.waitForTimeout(150);
}

describe.serial("forms", () => {
  test("Esc keeps a half-written link or entry in the detail; cleared, Esc closes the card", async () => {
    const c = await task("Esc in the detail");
    const page = await ui.browser.page(1440, 1600);
    await openCard(page, c.id);
    const d = page.locator("#detail");
    await d.locator(".links summary").click();
    await d.locator('.link-form input[name="target"]').fill("card_0123");
    await escTwice(page);
    expect(await d.isVisible()).toBe(true);
    expect(await d.locator('.link-form input[name="target"]').inputValue()).toBe("card_0123");
    await d.locator('.link-form input[name="target"]').fill("");

    await d.locator(".field-evidence summary").click();
    await d.locator(".entry-form textarea, .entry-form input[type=text]").first().fill("measured twice");
    await escTwice(page);
    expect(await d.isVisible()).toBe(true);
    expect(await d.locator(".entry-form textarea, .entry-form input[type=text]").first().inputValue()).toBe("measured twice");
    await d.locator(".entry-form textarea, .entry-form input[type=text]").first().fill("");

    await page.keyboard.press("Escape");
    await d.waitFor({ state: "hidden" });
    await page.close();
  }, T);

  test("Esc keeps a half-filled New card dialog open; Cancel closes it; an untouched one closes on Esc", async () => {
    const page = await ui.browser.page();
    await page.goto(`${ui.srv.url}/ui/`);
    await page.locator("body[data-ready]").waitFor();
    const dlg = page.locator("dialog.create-dialog");
    await page.locator("#new-card").click();
    await dlg.waitFor();
    await page.keyboard.press("Escape");
    await dlg.waitFor({ state: "detached" });

    await page.locator("#new-card").click();
    await dlg.locator("#new-title").fill("not lost");
    await escTwice(page);
    expect(await dlg.isVisible()).toBe(true);
    expect(await dlg.locator("#new-title").inputValue()).toBe("not lost");
    await dlg.locator("button", { hasText: "Cancel" }).click();
    await dlg.waitFor({ state: "detached" });
    await page.close();
  }, T);

  test("a new Save clears the last field error; a conflict updates the version in the header", async () => {
    const c = await task("Stale errors");
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const d = page.locator("#detail");
    await d.locator("#detail-edit").click();
    const parent = d.locator('.edit-form .form-field[data-field="parent"]');
    await parent.locator("input").fill("card_nope");
    await d.locator(".edit-form button[type=submit]").click();
    await parent.locator(".field-error", { hasText: "card id" }).waitFor();

    await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: 1, fields: { priority: "high" } }, "agent-1");
    await parent.locator("input").fill("");
    await d.locator("#edit-title").fill("Stale errors, fixed");
    await d.locator(".edit-form button[type=submit]").click();
    await d.locator(".edit-form .form-error", { hasText: "changed this card while you edited it" }).waitFor();
    expect(await parent.locator(".field-error").textContent()).toBe("");
    expect(await d.locator(".detail-version").textContent()).toContain("v2");
    await page.close();
  }, T);

  test("the Status picker disables the moves the board's transitions forbid", async () => {
    const c = await task("Picker moves");
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const enabled = () => page.locator("#detail-status option").evaluateAll((os) =>
      os.filter((o) => !(o as HTMLOptionElement).disabled).map((o) => (o as HTMLOptionElement).value));
    expect(await enabled()).toEqual(["backlog", "todo"]); // main: backlog → todo only
    expect(await page.locator('#detail-status option[value="done"]').textContent()).toContain("not allowed");
    await page.locator("#detail-status").selectOption("todo");
    await page.locator(`.lane[data-lane="todo"] .card[data-id="${c.id}"]`).waitFor();
    await page.waitForFunction(() => !(document.querySelector('#detail-status option[value="doing"]') as HTMLOptionElement)?.disabled);
    expect(await enabled()).toEqual(["backlog", "todo", "doing"]);

    const bug = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "Free moves", fields: { severity: "minor", steps: "s" } });
    await page.goto(`${ui.srv.url}/ui/?board=bugs&card=${bug.id}`);
    await page.locator("#detail .history").waitFor();
    // bugs enforces no transitions, but a bug moves by main's graph (main is the default board
    // and shows bugs: the server checks that one), so the picker offers what main allows
    expect(await enabled()).toEqual(["backlog", "todo"]);
    await expect(call(ui.srv.url, "PATCH", `/cards/${bug.id}`, { version: bug.version, status: "done" })).rejects.toThrow("transition_illegal");
    await page.close();
  }, T);

  test("a version conflict names who changed the card, in words, not API advice", async () => {
    const c = await task("Changed meanwhile");
    const page = await ui.browser.page();
    await page.route("**/v1/events/stream**", (r) => r.abort()); // no live update: the page keeps the old version
    await openCard(page, c.id);
    await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: 1, tags: ["docs"] }, "agent-1");
    await page.locator("#detail-owner").selectOption("ada");
    const toast = page.locator(".toast.error", { hasText: "Someone (agent-1) changed this card meanwhile: try again" });
    await toast.waitFor();
    expect(await toast.textContent()).not.toContain("re-read");
    expect(await toast.textContent()).not.toContain(c.id);
    await page.close();
  }, T);

  test("comments show pictures from https or this server; other schemes stay text", async () => {
    const c = await task("With a picture");
    // a 1x1 PNG stored as the card's artifact, so the picture loads from the server itself
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
    const res = await fetch(`${ui.srv.url}/v1/cards/${c.id}/artifacts/output`, { method: "POST", headers: { "content-type": "image/png", "x-service-actor": "ada" }, body: png });
    const uri = String((await res.json()).fields.output.uri);
    const local = `/v1/${uri.replace(/^\/+/, "")}`;
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: `Chart: ![the chart](${local})\n\n![remote](https://example.com/p.png) ![bad](javascript:alert(1))` });
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const img = page.locator('.comment img[alt="the chart"]');
    await img.waitFor();
    expect(await img.getAttribute("src")).toBe(local);
    await page.waitForFunction(() => (document.querySelector('.comment img[alt="the chart"]') as HTMLImageElement).naturalWidth === 1);
    expect(await page.locator('.comment img[alt="remote"]').getAttribute("src")).toBe("https://example.com/p.png");
    expect(await page.locator(".comment img").count()).toBe(2);
    expect(await page.locator(".comment").textContent()).toContain("![bad](javascript:alert(1))");
    await page.close();
  }, T);
});
