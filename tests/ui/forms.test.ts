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
    // focus stays in the panel, so Tab goes on from there (before: the page's top)
    expect(await page.evaluate(() => document.activeElement?.closest("#detail") !== null)).toBe(true);
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

    await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: 1, title: "Stale errors, by an agent" }, "agent-1");
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
    // the owner itself changed meanwhile (a write to other keys is applied over: below)
    await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: 1, owner: "agent-1" }, "agent-1");
    await page.locator("#detail-owner").selectOption("ada");
    const toast = page.locator(".toast.error", { hasText: "Someone (agent-1) changed this card meanwhile: try again" });
    await toast.waitFor();
    expect(await toast.textContent()).not.toContain("re-read");
    expect(await toast.textContent()).not.toContain(c.id);
    await page.close();
  }, T);

  test("Save sends only what the person changed: a user the page does not know is shown and kept", async () => {
    const bug = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "Kept values", fields: { severity: "minor", steps: "s", reported_by: "carol" } });
    const review = await call(ui.srv.url, "POST", "/cards", { type_id: "review", title: "Two reviewers", fields: { reviewers: ["ada", "dana"] } });
    const page = await ui.browser.page(1440, 1600);
    for (const c of [bug, review]) {
      await openCard(page, c.id);
      const d = page.locator("#detail");
      await d.locator("#detail-edit").click();
      await d.locator("#edit-title").fill(`${c.title}, renamed`);
      await d.locator(".edit-form button[type=submit]").click();
      await page.locator(".toast", { hasText: "Saved" }).first().waitFor();
    }
    // before: the pickers could not show carol or dana, read back as empty and sent that
    const b = await call(ui.srv.url, "GET", `/cards/${bug.id}`);
    expect([b.title, b.fields.reported_by, b.version]).toEqual(["Kept values, renamed", "carol", 2]);
    const r = await call(ui.srv.url, "GET", `/cards/${review.id}`);
    expect([r.title, r.fields.reviewers, r.version]).toEqual(["Two reviewers, renamed", ["ada", "dana"], 2]);
    await openCard(page, bug.id);
    await page.locator("#detail-edit").click();
    expect(await page.locator('.edit-form .form-field[data-field="reported_by"] select').inputValue()).toBe("carol");
    await page.close();
  }, T);

  test("the owner picker writes once, on Enter, not on every arrow key; Escape puts it back", async () => {
    const c = await task("Arrowed owner");
    const page = await ui.browser.page();
    await openCard(page, c.id);
    const owner = page.locator("#detail-owner");
    await owner.focus();
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("ArrowDown");
      await page.waitForTimeout(150);
    }
    expect(await owner.inputValue()).toBe("agent-2"); // "", ada, agent-1, agent-2
    await page.waitForTimeout(300);
    expect((await call(ui.srv.url, "GET", `/cards/${c.id}`)).version).toBe(1); // before: three writes, three owners
    await page.keyboard.press("Escape");
    expect(await owner.inputValue()).toBe("");
    expect(await page.locator("#detail").isVisible()).toBe(true); // Escape undid the pick, not the panel
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector(".detail-version")?.textContent?.includes("v2"));
    const events = await call(ui.srv.url, "GET", `/cards/${c.id}/events`);
    expect(events.items.filter((e: any) => e.type === "owner_changed").map((e: any) => e.diff.after)).toEqual(["ada"]);
    await page.close();
  }, T);

  test("a move or a picked status lands over an agent's write to other parts of the card", async () => {
    const c = await task("Busy card", "todo");
    const page = await ui.browser.page();
    await page.route("**/v1/events/stream**", (r) => r.abort()); // the page keeps the version it read
    await openCard(page, c.id);
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: "progress" }, "agent-1");
    await page.locator("#detail-status").selectOption("doing");
    await page.locator(`.lane[data-lane="doing"] .card[data-id="${c.id}"]`).waitFor();
    const now = await call(ui.srv.url, "GET", `/cards/${c.id}`);
    expect([now.status, now.version, now.comments.length]).toEqual(["doing", 3, 1]); // before: 409 "Someone changed this card"
    expect(await page.locator(".toast.error").count()).toBe(0);
    await page.close();
  }, T);

  test("New card: a half-typed date is flagged at its field, not dropped; an emptied default list stays empty", async () => {
    const page = await ui.browser.page(1440, 1600);
    await page.goto(`${ui.srv.url}/ui/`);
    await page.locator("body[data-ready]").waitFor();
    const dlg = page.locator("dialog.create-dialog");
    await page.locator("#new-card").click();
    await dlg.locator("#new-title").fill("Half a date");
    const due = dlg.locator('.form-field[data-field="due"] input');
    await due.click();
    await page.keyboard.type("12242026"); // the date without its time
    expect(await due.evaluate((el) => (el as HTMLInputElement).validity.badInput)).toBe(true);
    await dlg.locator("button[type=submit]").click();
    await dlg.locator('.form-field[data-field="due"] .field-error', { hasText: "whole date and time" }).waitFor();
    expect((await call(ui.srv.url, "GET", "/cards?q=%22Half%20a%20date%22")).items.length).toBe(0); // before: created without due
    await dlg.locator("button", { hasText: "Cancel" }).click();

    await page.locator("#new-card").click();
    await dlg.locator("#new-type").selectOption("review");
    await dlg.locator("#new-title").fill("Nobody yet");
    const ada = dlg.locator('.form-field[data-field="reviewers"] input[value="ada"]');
    expect(await ada.isChecked()).toBe(true); // the type's default
    await ada.uncheck();
    await dlg.locator("button[type=submit]").click();
    await dlg.waitFor({ state: "detached" });
    const made = (await call(ui.srv.url, "GET", "/cards?type_id=review&sort=-created_at&limit=1")).items[0];
    expect([made.title, made.fields.reviewers]).toEqual(["Nobody yet", undefined]); // before: ["ada"] came back
    await page.close();
  }, T);

  test("a refused entry names its item field, and the message stands under that field", async () => {
    const c = await task("Empty evidence");
    const page = await ui.browser.page(1440, 1600);
    await openCard(page, c.id);
    const d = page.locator("#detail");
    await d.locator(".field-evidence summary").click();
    await d.locator(".entry-form button[type=submit]").click();
    // the server names `evidence.note`; before, the message went to the form's general slot
    await d.locator('.entry-form .form-field[data-field="note"] .field-error', { hasText: "note" }).waitFor();
    expect(await d.locator(".entry-form > .form-error").textContent()).toBe("");
    await page.close();
  }, T);

  test("steering from the detail: claim and release, edit and remove an entry, edit a comment, delete the card", async () => {
    const c = await task("Steered by hand", "todo");
    await call(ui.srv.url, "POST", `/cards/${c.id}/fields/evidence/append`, { version: 1, entry: { note: "first try" } }, "agent-1");
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: "handoff: tests pass" }, "ada");
    const page = await ui.browser.page(1440, 1600);
    await openCard(page, c.id);
    const d = page.locator("#detail");
    const card = () => call(ui.srv.url, "GET", `/cards/${c.id}`);

    // an agent writes meanwhile; the claim still lands (the card is still unowned)
    await page.route("**/v1/events/stream**", (r) => r.abort());
    await call(ui.srv.url, "POST", `/cards/${c.id}/comments`, { body: "still here" }, "agent-1");
    await d.locator("#detail-claim").click();
    await d.locator("#detail-release").waitFor();
    expect((await card()).owner).toBe("ada");
    await page.waitForTimeout(600); // a second click within 0.5 s would be the rest of a double click
    await d.locator("#detail-release").click();
    await d.locator("#detail-claim").waitFor();
    expect((await card()).owner).toBeUndefined();

    const entry = d.locator(".field-evidence li[data-entry]").first();
    await entry.locator(".entry-edit").click();
    await d.locator('.entry-edit-form .form-field[data-field="note"] textarea, .entry-edit-form .form-field[data-field="note"] input').fill("second try");
    await d.locator(".entry-edit-form button[type=submit]").click();
    await d.locator(".field-evidence li[data-entry]", { hasText: "second try" }).waitFor();
    let now = await card();
    expect(now.fields.evidence.map((e: any) => e.note)).toEqual(["second try"]);

    const comment = d.locator(".comment", { hasText: "handoff: tests pass" });
    await comment.locator(".comment-edit").click();
    await d.locator(".comment-edit-form textarea").fill("handoff: all tests pass");
    await d.locator(".comment-edit-form button[type=submit]").click();
    await d.locator(".comment", { hasText: "all tests pass" }).locator("text=(edited)").waitFor();

    const remove = d.locator(".field-evidence li[data-entry] .entry-remove");
    await remove.click();
    expect(await remove.textContent()).toBe("Remove for good?"); // the first click only asks
    expect((await card()).fields.evidence).toHaveLength(1);
    await page.waitForTimeout(600); // the person reads the question (a double click is no yes)
    await remove.click();
    await d.locator(".field-evidence h3", { hasText: "(0)" }).waitFor();

    await d.locator("#detail-delete").click();
    await page.waitForTimeout(600);
    await d.locator("#detail-delete").click();
    await d.waitFor({ state: "hidden" });
    await page.locator(`.card[data-id="${c.id}"]`).waitFor({ state: "detached" });
    await expect(card()).rejects.toThrow("404");
    const types = (await call(ui.srv.url, "GET", `/events?types=owner_changed,item_updated,comment_edited,item_removed,card_deleted`)).items
      .filter((e: any) => e.card_id === c.id).map((e: any) => e.type);
    expect(types).toEqual(["owner_changed", "owner_changed", "item_updated", "comment_edited", "item_removed", "card_deleted"]);
    await page.close();
  }, T);

  test("Tab from a card leaves the board: the lanes' scrolling lists are no tab stops", async () => {
    await task("Tab order");
    const page = await ui.browser.page();
    await page.goto(`${ui.srv.url}/ui/`);
    await page.locator("body[data-ready]").waitFor();
    await page.locator('.card[tabindex="0"]').first().focus();
    await page.keyboard.press("Tab");
    const next = await page.evaluate(() => document.activeElement?.className ?? "");
    expect(next).not.toContain("lane-cards"); // before: each lane's list was a stop of its own
    expect(await page.locator(".lane-cards").first().getAttribute("aria-label")).toBe("Cards in Backlog");
    await page.close();
  }, T);

  test("on a phone the card detail never scrolls sideways: a long status option stays inside the panel", async () => {
    const c = await task("Narrow");
    const page = await ui.browser.page(390, 844);
    await openCard(page, c.id);
    expect(await page.locator('#detail-status option[value="done"]').textContent()).toContain("not allowed from here");
    const sizes = await page.evaluate(() => {
      const d = document.querySelector<HTMLElement>("#detail")!;
      return { scroll: d.scrollWidth, client: d.clientWidth, select: document.querySelector("#detail-status")!.getBoundingClientRect().right };
    });
    expect(sizes.scroll).toBeLessThanOrEqual(sizes.client); // before: 404 against 390
    expect(sizes.select).toBeLessThanOrEqual(390);
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
