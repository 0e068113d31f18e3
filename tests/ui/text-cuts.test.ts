/**
 * Text the board shortens (a text field's excerpt on the card face, a user's initials, a
 * long artifact name, the entry named by Edit and Remove) is cut between characters: a cut
 * inside an emoji's surrogate pair left half of it in the page (src/domain/codepoints.ts).
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { servedBoard } from "./suite.ts";
import { call } from "./seed.ts";

const T = 30_000;

// the task's description on its face, to see the excerpt
const ui = servedBoard((files: any) => { files["definitions/boards/main.json"].presentation.card_preview.task.push("description"); });

async function open(page: Page, query: string): Promise<void> {
  await page.goto(`${ui.srv.url}/ui/${query}`);
  await page.locator("body[data-ready]").waitFor();
}

describe.serial("text cut short", () => {
  test("never leaves half of an emoji: face excerpt, initials, artifact name, entry name", async () => {
    await call(ui.srv.url, "POST", "/users", { id: "rocketeer", kind: "human", display_name: "🚀 Rocket Crew" });
    // each cut falls between the two halves of a 🚀: the excerpt at 80 units, the entry name
    // at 40, the artifact name after 12 and before its last 8
    let t = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Emoji cuts", status: "todo", fields: { priority: "normal", description: `${"d".repeat(79)}🚀 more` } });
    t = await call(ui.srv.url, "PATCH", `/cards/${t.id}`, { version: t.version, owner: "rocketeer" });
    await call(ui.srv.url, "POST", `/cards/${t.id}/fields/evidence/append`, { version: t.version, entry: { note: `${"n".repeat(39)}🚀 more` } });
    const bug = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "Emoji artifact", fields: { severity: "minor", steps: "Run nightly.", logs: { uri: `https://ci.example.com/${"a".repeat(11)}🚀${"b".repeat(10)}🚀c.txtxx` } } });

    const page = await ui.browser.page();
    await open(page, `?card=${t.id}`);
    const face = page.locator(`.card[data-id="${t.id}"]`);
    const shown = {
      excerpt: await face.locator(".excerpt").textContent(),
      initials: await face.locator(".owner .avatar").textContent(),
      entry: await page.locator("#detail .entry-edit").first().getAttribute("aria-label"),
    };
    await open(page, `?board=bugs&card=${bug.id}`);
    const artifact = await page.locator('#detail dd[data-field="logs"] .artifact a').textContent();
    expect({ ...shown, artifact }).toEqual({
      excerpt: "d".repeat(79),
      initials: "🚀",
      entry: `Edit Evidence entry “${"n".repeat(39)}…”`,
      artifact: `⇩ ${"a".repeat(11)}…c.txtxx`,
    });
    await page.close();
  }, T);
});
