/**
 * Accessibility of the board for keyboard, screen-reader and low-vision users: focus that
 * stays where the person is, a visible focus ring (also in forced colours), what the polite
 * status region says, contrast from the computed styles, names of groups and cards, form
 * errors tied to their fields, pickers that wait for Enter, and single-key shortcuts that
 * leave a focused control alone.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { run } from "../helpers/binary.ts";
import { servedBoard } from "./suite.ts";
import { contrast } from "./contrast.ts";
import { call, seedDemo, type Seeded } from "./seed.ts";

const T = 30_000;
const ui = servedBoard();
let s: Seeded;

beforeAll(async () => {
  s = await seedDemo(ui.srv.url);
}, 60_000);

async function openBoard(page: Page, query = ""): Promise<void> {
  await page.goto(`${ui.srv.url}/ui/${query}`);
  await page.locator("body[data-ready]").waitFor();
}

/** A description of the focused element: `tag#id.class [data-*]`. */
const focused = (page: Page) => page.evaluate(() => {
  const a = document.activeElement as HTMLElement | null;
  if (!a || a === document.body) return "body";
  return `${a.tagName.toLowerCase()}${a.id ? `#${a.id}` : ""}${a.dataset.filter !== undefined ? `[filter=${a.dataset.filter}]` : ""}${a.dataset.id ? `[id=${a.dataset.id}]` : ""}`;
});

describe.serial("accessibility", () => {
  test("a filter chip pressed with the keyboard keeps the focus and says it is pressed", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    const urgent = page.locator('.chip[data-filter="urgent"]');
    await urgent.focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("filter") === "urgent");
    expect(await focused(page)).toBe("button[filter=urgent]");
    expect(await urgent.getAttribute("aria-pressed")).toBe("true");
    expect(await page.locator('.chip[data-filter=""]').getAttribute("aria-pressed")).toBe("false");
    await page.keyboard.press("Space");
    await page.waitForFunction(() => !new URL(location.href).searchParams.has("filter"));
    expect(await focused(page)).toBe("button[filter=urgent]");
    expect(await urgent.getAttribute("aria-pressed")).toBe("false");
    await page.close();
  }, T);
});

describe.serial("focus ring", () => {
  test("the focused card has a solid outline that stands 3:1 against its lane, also over the limit and in forced colours", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    const ring = () => page.evaluate(() => {
      const cs = getComputedStyle(document.activeElement!);
      return `${cs.outlineStyle} ${cs.outlineWidth}`;
    });
    // keyboard focus (focus-visible): into the review lane, over its WIP limit
    await page.locator(`.card[data-id="${s.dump.id}"]`).focus();
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => document.activeElement?.closest(".lane")?.classList.contains("over-limit"))).toBe(true);
    expect(await ring()).toBe("solid 2px");
    expect(await contrast(page, ".card:focus-visible", "outline")).toBeGreaterThanOrEqual(3);
    await page.keyboard.press("ArrowLeft");
    expect(await contrast(page, ".card:focus-visible", "outline")).toBeGreaterThanOrEqual(3);
    // a top-bar button, on white
    await page.locator("#new-card").focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    expect(await ring()).toBe("solid 2px");
    expect(await contrast(page, "#new-card", "outline")).toBeGreaterThanOrEqual(3);
    await page.emulateMedia({ forcedColors: "active" });
    await page.locator(`.card[data-id="${s.dump.id}"]`).focus();
    await page.keyboard.press("ArrowDown");
    expect(await ring()).toBe("solid 2px");
    await page.close();
  }, T);
});
