/**
 * Accessibility of the board for keyboard, screen-reader and low-vision users: focus that
 * stays where the person is, a visible focus ring (also in forced colours), what the polite
 * status region says, contrast from the computed styles, names of groups and cards, form
 * errors tied to their fields, pickers that wait for Enter, and single-key shortcuts that
 * leave a focused control alone.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { run, serve } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { servedBoard } from "./suite.ts";
import { contrast } from "./contrast.ts";
import { call, seedDemo, type Seeded } from "./seed.ts";

const T = 30_000;
// a card done for more than a second is stuck: conditions with a time and a limit to show
const ui = servedBoard((files: any) => { files["definitions/boards/main.json"].monitors.max_time_in_status.done = "1s"; });
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

/** What the polite status region says once it says something that matches `re`. */
async function announced(page: Page, re: RegExp): Promise<string> {
  const h = await page.waitForFunction((src) => {
    const t = document.querySelector("#announcer")?.textContent ?? "";
    return new RegExp(src).test(t) ? t : false;
  }, re.source, { timeout: 4000 }).catch(async () => {
    throw new Error(`the status region says ${JSON.stringify(await page.locator("#announcer").textContent())}, not ${re}`);
  });
  return (await h.jsonValue()) as string;
}

describe.serial("announcements", () => {
  test("a keyboard move is announced with the card, the lane and its count against the limit; lane counts are not live", async () => {
    const c = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Announce my move", status: "todo", fields: { priority: "low" } });
    const page = await ui.browser.page();
    await openBoard(page);
    expect(await page.locator(".lane-count[aria-live], .breach-count[role], .breach-count[aria-live]").count()).toBe(0);
    expect(await page.locator('#announcer[role="status"]').count()).toBe(1);
    await page.locator(`.card[data-id="${c.id}"]`).focus();
    await page.keyboard.press("Shift+ArrowRight");
    expect(await announced(page, /Moved/)).toBe("Moved “Announce my move” to In progress: 4 cards, WIP limit 3 (over the limit).");
    await call(ui.srv.url, "DELETE", `/cards/${c.id}`);
    await page.close();
  }, T);

  test("a move by an agent is announced with who moved what where", async () => {
    const c = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Moved by an agent", status: "todo", fields: { priority: "low" } });
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator('#live-status[data-state="live"]').waitFor();
    await call(ui.srv.url, "PATCH", `/cards/${c.id}`, { version: c.version, status: "doing" }, "agent-1");
    expect(await announced(page, /agent-1/)).toBe("agent-1 moved “Moved by an agent” to In progress.");
    await call(ui.srv.url, "DELETE", `/cards/${c.id}`);
    await page.close();
  }, T);

  test("a search or a filter announces how many cards match", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator("#search").fill("rate limit");
    expect(await announced(page, /match/)).toBe("2 cards match.");
    await page.locator("#search").fill("no such words anywhere");
    expect(await announced(page, /^No cards/)).toBe("No cards match.");
    await page.locator("#search").fill("");
    expect(await announced(page, /^Showing all/)).toMatch(/^Showing all \d+ cards\.$/);
    await page.locator('.chip[data-filter="urgent"]').click();
    expect(await announced(page, /\d cards? match/)).toMatch(/^\d+ cards? match(es)?\.$/);
    await page.close();
  }, T);
});

describe.serial("focus when a card leaves", () => {
  const task = (title: string, status: string, type = "task") =>
    call(ui.srv.url, "POST", "/cards", { type_id: type, title, status, fields: type === "task" ? { priority: "low" } : { severity: "minor", steps: "Open it." } });

  test("an agent deleting the focused card hands the focus to its neighbour in the lane and says so", async () => {
    const older = await task("Older neighbour", "backlog");
    const doomed = await task("Focused, then deleted", "backlog");
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator('#live-status[data-state="live"]').waitFor();
    // newest first (lane_sort -updated_at): the doomed card, then its older neighbour
    await page.locator(`.card[data-id="${doomed.id}"]`).focus();
    await call(ui.srv.url, "DELETE", `/cards/${doomed.id}`, undefined, "agent-1");
    await page.locator(`.card[data-id="${doomed.id}"]`).waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement !== document.body);
    expect(await focused(page)).toBe(`div[id=${older.id}]`);
    expect(await page.locator(`.card[data-id="${older.id}"]`).getAttribute("tabindex")).toBe("0");
    expect(await announced(page, /no longer/)).toBe("“Focused, then deleted” is no longer on the board. Focus on “Older neighbour”.");
    await call(ui.srv.url, "DELETE", `/cards/${older.id}`);
    await page.close();
  }, T);

  test("the last card of a lane moved off the board leaves the focus on the empty lane; the arrows lead on from it", async () => {
    // the bugs board's backlog holds only this bug; a wontfix resolution takes it off the board (its default filter)
    const bug = await task("Last bug in the backlog", "backlog", "bug");
    const page = await ui.browser.page();
    await openBoard(page, "?board=bugs");
    await page.locator('#live-status[data-state="live"]').waitFor();
    await page.locator(`.card[data-id="${bug.id}"]`).focus();
    await call(ui.srv.url, "PATCH", `/cards/${bug.id}`, { version: bug.version, fields: { resolution: "wontfix" } }, "agent-1");
    await page.locator(`.card[data-id="${bug.id}"]`).waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement !== document.body);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Cards in Backlog");
    expect(await announced(page, /no longer/)).toBe("“Last bug in the backlog” is no longer on the board. Backlog has no cards now.");
    await page.keyboard.press("ArrowRight");
    expect(await page.evaluate(() => document.activeElement?.closest(".lane")?.getAttribute("data-lane"))).toBe("todo");
    await call(ui.srv.url, "DELETE", `/cards/${bug.id}`);
    await page.close();
  }, T);
});

describe.serial("contrast", () => {
  test("text is 4.5:1 and input edges 3:1 against what they sit on (computed styles)", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator("#breach-count:not([hidden])").waitFor();
    // signals that need time or an empty watched lane to appear: shown here for their colours
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.lane[data-lane="todo"] .drained-badge')!.hidden = false;
      const top = document.querySelector(".card .card-top")!;
      const stuck = document.createElement("span");
      stuck.className = "breach-badge stuck";
      stuck.textContent = "stuck";
      top.append(stuck);
    });
    expect(await page.locator('.lane[data-lane="doing"]').getAttribute("class")).toContain("at-limit");
    const text = {
      "at-limit lane count": '.lane[data-lane="doing"] .lane-count',
      "over-limit lane count": '.lane[data-lane="review"] .lane-count',
      "lane count": '.lane[data-lane="backlog"] .lane-count',
      "empty badge": '.lane[data-lane="todo"] .drained-badge',
      "stuck badge": ".breach-badge.stuck",
      "breach count": "#breach-count",
      "high option badge": '.badge[data-value="high"]',
      "low option badge": '.badge[data-value="low"]',
      "short id": ".card .short-id",
      "tag": ".card .tag",
    };
    const ratios: Record<string, boolean> = {};
    for (const [name, sel] of Object.entries(text)) ratios[name] = (await contrast(page, sel)) >= 4.5;
    ratios["search box edge"] = (await contrast(page, "#search", "border")) >= 3;
    ratios["board picker edge"] = (await contrast(page, "#board-picker", "border")) >= 3;
    ratios["breach count edge"] = (await contrast(page, "#breach-count", "border")) >= 3;
    expect(Object.entries(ratios).filter(([, ok]) => !ok).map(([name]) => name)).toEqual([]);
    await page.close();
  }, T);
});

/** The ids aria-describedby of `sel` names, and the text of each. */
const descriptions = (page: Page, sel: string) => page.locator(sel).evaluate((el) =>
  (el.getAttribute("aria-describedby") ?? "").split(" ").filter(Boolean).map((id) => document.getElementById(id)?.textContent ?? `(no #${id})`));

describe.serial("forms", () => {
  test("the New card form names its checkbox groups, marks required fields and ties descriptions and server errors to their controls", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator("#new-card").click();
    const dlg = page.locator("dialog.create-dialog");
    await dlg.waitFor();
    // groups of checkboxes have names; no label points at a missing control
    expect(await dlg.getByRole("group", { name: "Tags" }).count()).toBe(1);
    expect(await dlg.getByRole("group", { name: "Components" }).count()).toBe(1);
    expect(await dlg.locator("label[for]").evaluateAll((ls) => ls.filter((l) => !document.getElementById((l as HTMLLabelElement).htmlFor)).length)).toBe(0);
    // required: said, not only shown as "*"
    const priority = dlg.locator('[data-field="priority"] select');
    expect(await priority.getAttribute("aria-required")).toBe("true");
    expect(await dlg.getByRole("combobox", { name: "Priority (required)" }).count()).toBe(1);
    expect(await dlg.getByRole("textbox", { name: "Title (required)" }).count()).toBe(1);
    // a description is read with its control
    expect((await descriptions(page, 'dialog [data-field="description"] textarea')).length).toBe(1);
    // the server refuses an empty title: the field says it is invalid, and why
    await dlg.locator("button[type=submit]").click();
    const title = dlg.locator("#new-title");
    await page.waitForFunction(() => document.querySelector("#new-title")?.getAttribute("aria-invalid") === "true");
    expect(await focused(page)).toBe("input#new-title");
    const said = await descriptions(page, "dialog #new-title");
    expect(said.some((t) => /title/i.test(t))).toBe(true);
    await title.fill("A title now");
    await dlg.getByRole("button", { name: "Cancel" }).click();
    await dlg.waitFor({ state: "detached" });
    await page.close();
  }, T);

  test("a refused link target is marked invalid and described by the refusal", async () => {
    const page = await ui.browser.page(1440, 1600);
    await openBoard(page, `?card=${s.guide.id}`);
    const d = page.locator("#detail");
    await d.locator(".links summary").click();
    const target = d.locator('.link-form input[name="target"]');
    await target.fill("0badc0de");
    await d.locator(".link-form button[type=submit]").click();
    await page.waitForFunction(() => document.querySelector('.link-form input[name="target"]')?.getAttribute("aria-invalid") === "true");
    expect((await descriptions(page, '.link-form input[name="target"]')).join(" ")).toContain("no card has the id 0badc0de");
    await target.fill("");
    expect(await target.getAttribute("aria-invalid")).toBe(null);
    await page.close();
  }, T);
});

describe.serial("top-bar pickers", () => {
  test("the arrow keys step through the board picker without switching; Enter switches", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    const picker = page.locator("#board-picker");
    await picker.focus();
    await page.keyboard.press("ArrowDown");
    expect(await picker.inputValue()).toBe("bugs");
    await page.waitForTimeout(300);
    expect(new URL(page.url()).searchParams.get("board")).toBe(null);
    expect(await page.title()).toBe("Agent queue · cards");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("board") === "bugs");
    expect(await page.title()).toBe("Bug triage · cards");
    expect(await focused(page)).toBe("select#board-picker");
    await page.close();
  }, T);

  test("the arrow keys step through the actor picker without acting as anyone; Enter or leaving it picks", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    const picker = page.locator("#actor");
    const before = await picker.inputValue();
    await picker.focus();
    await page.keyboard.press("ArrowDown");
    const stepped = await picker.inputValue();
    expect(stepped).not.toBe(before);
    await page.waitForTimeout(300);
    expect(await page.locator(".toast", { hasText: "Acting as" }).count()).toBe(0);
    expect(await page.evaluate(() => localStorage.getItem("cards.actor"))).not.toBe(stepped);
    await page.keyboard.press("Tab");
    await page.locator(".toast", { hasText: `Acting as ${stepped}` }).waitFor();
    expect(await page.evaluate(() => localStorage.getItem("cards.actor"))).toBe(stepped);
    await page.evaluate(() => localStorage.removeItem("cards.actor"));
    await page.close();
  }, T);
});

describe.serial("single-key shortcuts", () => {
  test("n, / and ? leave a focused chip or button alone, and still work from a card", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator('.chip[data-filter="urgent"]').focus();
    for (const key of ["n", "/", "?"]) await page.keyboard.press(key);
    await page.waitForTimeout(200);
    expect(await page.locator("dialog[open]").count()).toBe(0);
    expect(await focused(page)).toBe("button[filter=urgent]");
    await page.locator(`.card[data-id="${s.guide.id}"]`).focus();
    await page.keyboard.press("n");
    await page.locator("dialog.create-dialog[open]").waitFor();
    await page.keyboard.press("Escape");
    await page.locator(`.card[data-id="${s.guide.id}"]`).focus();
    await page.keyboard.press("/");
    expect(await focused(page)).toBe("input#search");
    await page.close();
  }, T);
});

describe.serial("card names", () => {
  test("a card's accessible name says what its face shows: preview fields, tags and owner too", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    const name = await page.locator(`.card[data-id="${s.rate.id}"]`).getAttribute("aria-label");
    expect(name).toStartWith(`Add rate limiting to the public API, ${s.rate.id.slice(5, 13)}, blocked`);
    expect(name).toContain("Priority: high");
    expect(name).toContain("Components: api");
    expect(name).toContain("tags: backend, security");
    expect(name).toEndWith("owner: Agent 1");
    await page.close();
  }, T);
});

describe.serial("time to read", () => {
  test("an error toast stays until dismissed; a note waits while the focus is in it", async () => {
    const page = await ui.browser.page();
    await openBoard(page);
    // done may only go back to todo: a move to review is refused
    await page.locator(`.card[data-id="${s.ci.id}"]`).focus();
    await page.keyboard.press("Shift+ArrowLeft");
    const error = page.locator(".toast.error");
    await error.waitFor();
    const actor = page.locator("#actor");
    await actor.selectOption("agent-1");
    const note = page.locator(".toast.info", { hasText: "Acting as agent-1" });
    await note.locator(".toast-close").focus();
    await page.waitForTimeout(8600); // past the 8 s errors had, and the 4 s of a note
    expect(await error.count()).toBe(1);
    expect(await note.count()).toBe(1);
    await error.locator(".toast-close").click();
    expect(await error.count()).toBe(0);
    await page.evaluate(() => localStorage.removeItem("cards.actor"));
    await page.close();
  }, T);

  test("a \"Delete for good?\" question is announced and stands while its button has the focus", async () => {
    const c = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "Asked, not deleted", status: "backlog", fields: { priority: "low" } });
    const page = await ui.browser.page();
    await openBoard(page, `?card=${c.id}`);
    const del = page.locator("#detail-delete");
    await del.focus();
    await page.keyboard.press("Enter");
    expect(await del.textContent()).toBe("Delete for good?");
    expect(await announced(page, /for good/)).toBe("Delete for good? Press the button again to confirm.");
    await page.waitForTimeout(4500); // the question went after 4 s
    expect(await del.textContent()).toBe("Delete for good?");
    await page.keyboard.press("Shift+Tab");
    expect(await del.textContent()).toBe("Delete");
    await call(ui.srv.url, "DELETE", `/cards/${c.id}`);
    await page.close();
  }, T);
});

/** Tabs `n` times; after each, whether the focused control is under one of `bars` (a sticky bar it is not in) or outside `box`. */
async function tabHidden(page: Page, n: number, box: string, bars: string, shift = false): Promise<string[]> {
  const hidden: string[] = [];
  for (let i = 0; i < n; i++) {
    await page.keyboard.press(shift ? "Shift+Tab" : "Tab");
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const why = await page.evaluate(([box, bars]) => {
      const el = document.activeElement as HTMLElement;
      const name = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} "${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 30)}"`;
      if (!el.closest(box!)) return `${name} is outside ${box}`;
      const r = el.getBoundingClientRect();
      for (const bar of document.querySelectorAll<HTMLElement>(bars!)) {
        if (bar.contains(el)) continue;
        const b = bar.getBoundingClientRect();
        if (r.bottom > b.top + 1 && r.top < b.bottom - 1) return `${name} is under ${bar.className}`;
      }
      return "";
    }, [box, bars] as const);
    if (why) hidden.push(why);
  }
  return hidden;
}

describe.serial("focus not hidden", () => {
  test("Tab and Shift+Tab go round inside the open card panel, never to the top bar or board under it", async () => {
    const page = await ui.browser.page(1280, 800);
    await openBoard(page, `?card=${s.rate.id}`);
    await page.locator("#detail-title").focus();
    expect(await tabHidden(page, 60, "#detail", ".detail-head")).toEqual([]);
    await page.locator("#detail-title").focus();
    expect(await tabHidden(page, 12, "#detail", ".detail-head", true)).toEqual([]);
    await page.close();
  }, T);

  test("on a phone, the panel's stops are never under its sticky head, nor the New card form's under its footer", async () => {
    const page = await ui.browser.page(640, 400);
    await openBoard(page, `?card=${s.rate.id}`);
    await page.locator("#detail-title").focus();
    expect(await tabHidden(page, 30, "#detail", ".detail-head", true)).toEqual([]);
    await page.keyboard.press("Escape");
    for (const [w, hgt] of [[640, 400], [320, 256]] as const) {
      await page.setViewportSize({ width: w, height: hgt });
      await page.locator("#new-card").click();
      await page.locator("dialog.create-dialog").waitFor();
      expect(await tabHidden(page, 24, "dialog", ".dialog-actions")).toEqual([]);
      await page.locator("dialog.create-dialog").getByRole("button", { name: "Cancel" }).click();
    }
    await page.close();
  }, T);
});

describe.serial("names, targets and markup", () => {
  test("entry, comment and copy buttons say what they act on, and are 24 px targets", async () => {
    const page = await ui.browser.page(1440, 1600);
    await openBoard(page, `?card=${s.rate.id}`);
    const d = page.locator("#detail");
    await d.locator(".comment-edit").first().waitFor();
    const names = async (sel: string) => d.locator(sel).evaluateAll((bs) => bs.map((b) => b.getAttribute("aria-label") ?? b.textContent));
    const edits = await names(".entry-edit");
    expect(edits.length).toBe(2);
    expect(new Set(edits).size).toBe(2);
    expect(edits[0]).toMatch(/^Edit Evidence entry “/);
    expect((await names(".entry-remove"))[0]).toMatch(/^Remove Evidence entry “/);
    expect(await names(".comment-edit")).toEqual(expect.arrayContaining([expect.stringMatching(/^Edit comment by Agent 1, /)]));
    expect((await names(".copy-id"))[0]).toBe(`Copy the card id ${s.rate.id.slice(5, 13)}`);
    const small = await d.locator(".entry-edit, .entry-remove, .comment-edit, .copy-id, .link-remove").evaluateAll((bs) =>
      bs.map((b) => b.getBoundingClientRect()).filter((r) => r.width < 24 || r.height < 24).length);
    expect(small).toBe(0);
    await page.locator("#detail .detail-close").click();
    await page.locator("#new-card").click();
    const boxes = await page.locator("dialog .checks input[type=checkbox]").evaluateAll((bs) =>
      bs.map((b) => { const r = b.getBoundingClientRect(); const cs = getComputedStyle(b); return [r.width + parseFloat(cs.marginLeft) + parseFloat(cs.marginRight), r.height + parseFloat(cs.marginTop) + parseFloat(cs.marginBottom)]; }));
    expect(boxes.length).toBeGreaterThan(0);
    expect(boxes.filter(([w, hgt]) => w! < 24 || hgt! < 24)).toEqual([]);
    await page.close();
  }, T);

  test("the page has one h1, cards are list items that may be, and on a phone the status says more than a colour", async () => {
    const page = await ui.browser.page(600, 800);
    await openBoard(page);
    expect(await page.locator("h1").count()).toBe(1);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain("Agent");
    expect(await page.locator('.card[role="listitem"]').evaluateAll((cs) => cs.filter((c) => c.tagName !== "DIV").length)).toBe(0);
    const size = () => page.locator("#live-status").evaluate((el) => getComputedStyle(el).fontSize);
    await page.locator('#live-status[data-state="live"]').waitFor();
    await page.locator("#live-status").evaluate((el) => { el.dataset.state = "offline"; el.textContent = "offline — retrying in 4s"; });
    expect(parseFloat(await size())).toBeGreaterThanOrEqual(11);
    await page.close();
  }, T);
});

describe.serial("live status", () => {
  test("offline, the status region says so once and again when live; the seconds to the next attempt are shown, not read out", async () => {
    // a server of its own, stopped and started again on its address
    const dir = makeWorkspace();
    let srv = await serve(dir);
    const port = new URL(srv.url).port;
    const page = await ui.browser.page();
    await page.goto(`${srv.url}/ui/`);
    await page.locator('#live-status[data-state="live"]').waitFor();
    // what a screen reader is told: every write to the region outside its aria-hidden parts
    await page.evaluate(() => {
      const region = document.querySelector("#live-status")!;
      const w = window as unknown as { spoken: string[]; writes: number };
      const ariaHidden = (n: Node) => n instanceof Element && n.getAttribute("aria-hidden") === "true";
      const words = (n: Node): string => ariaHidden(n) ? "" : n.nodeType === Node.TEXT_NODE ? n.textContent ?? "" : [...n.childNodes].map(words).join("");
      const inHidden = (n: Node) => Boolean((n instanceof Element ? n : n.parentElement)?.closest('[aria-hidden="true"]'));
      w.spoken = [];
      w.writes = 0;
      new MutationObserver((records) => {
        const said = records.filter((r) => !inHidden(r.target) && (r.type === "characterData" || [...r.addedNodes, ...r.removedNodes].some((n) => !ariaHidden(n))));
        if (!said.length) return;
        w.writes += said.length;
        w.spoken.push(words(region).trim());
      }).observe(region, { subtree: true, childList: true, characterData: true });
    });
    const probe = () => page.evaluate(() => {
      const w = window as unknown as { spoken: string[]; writes: number };
      return { spoken: [...w.spoken], writes: w.writes, shown: document.querySelector("#live-status")!.textContent };
    });
    await srv.stop();
    // past 10 s without the stream
    await page.locator('#live-status[data-state="offline"]').waitFor({ timeout: 20_000 });
    const offline = await probe();
    expect(offline.shown).toMatch(/^offline — retrying (in \d+s|…)$/);
    // the countdown runs on screen for a few seconds: the words read out stay as they were
    const shown = new Set<string>();
    for (let i = 0; i < 8; i++) { shown.add((await probe()).shown ?? ""); await page.waitForTimeout(450); }
    expect(shown.size).toBeGreaterThan(1);
    const later = await probe();
    expect(later.writes).toBe(offline.writes);
    expect(later.spoken.at(-1)).toMatch(/^offline/);
    srv = await serve(dir, {}, ["--port", port]);
    try {
      await page.locator('#live-status[data-state="live"]').waitFor({ timeout: 20_000 });
      const back = await probe();
      // each state said once, in order: the browser's own retries, offline, live again
      expect(back.spoken.filter((t) => /^offline/.test(t)).length).toBe(1);
      expect(back.spoken.at(-1)).toBe("live");
      expect(back.spoken.filter((t, i) => t === back.spoken[i - 1])).toEqual([]);
    } finally {
      await page.close();
      await srv.stop();
    }
  }, 60_000);
});

/** Children of lists (role=list, ul, ol) that are not list items: what axe's `list` and `aria-required-children` rules flag. */
const strayListChildren = (page: Page) => page.locator('[role="list"], ul, ol').evaluateAll((lists) => lists.flatMap((l) =>
  [...l.children].filter((c) => getComputedStyle(c).display !== "none" && c.getAttribute("aria-hidden") !== "true"
    && (c.getAttribute("role") ?? (c.tagName === "LI" ? "listitem" : "")) !== "listitem")
    .map((c) => `${l.getAttribute("aria-label") ?? l.className}: <${c.tagName.toLowerCase()} class="${c.className}">${c.textContent}`)));

/** The accessible description of `sel`, from aria-describedby. */
const description = async (page: Page, sel: string) => (await descriptions(page, sel)).join(" ");

describe.serial("empty lanes", () => {
  test("an empty lane is an empty list described as having no cards; a drop onto it and its focus still work", async () => {
    // the bugs board's backlog, doing and done hold no cards
    const page = await ui.browser.page();
    await openBoard(page, "?board=bugs");
    const doing = page.locator('.lane[data-lane="doing"]');
    expect(await strayListChildren(page)).toEqual([]);
    expect(await doing.locator(".lane-cards").ariaSnapshot()).toBe('- list "Cards in In progress"');
    expect(await description(page, '.lane[data-lane="doing"] .lane-cards')).toBe("No cards");
    expect(await doing.getByText("No cards").isVisible()).toBe(true);
    // the empty lane takes the focus and the arrows lead on from it
    await doing.locator(".lane-cards").focus();
    await page.keyboard.press("ArrowLeft");
    expect(await page.evaluate(() => document.activeElement?.closest(".lane")?.getAttribute("data-lane"))).toBe("todo");
    // a drop onto it moves the card there; the lane is a list of one card then, and says nothing of being empty
    const bug = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "Dropped on an empty lane", status: "todo", fields: { severity: "minor", steps: "Drop it." } });
    await page.locator(`.card[data-id="${bug.id}"]`).waitFor();
    const from = (await page.locator(`.card[data-id="${bug.id}"]`).boundingBox())!;
    const to = (await doing.boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + 12);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y + 120, { steps: 8 });
    await page.mouse.up();
    await doing.locator(`.card[data-id="${bug.id}"]`).waitFor();
    await page.waitForFunction((id) => document.querySelector(`.card[data-id="${id}"]`)?.getAttribute("aria-busy") !== "true", bug.id);
    expect((await call(ui.srv.url, "GET", `/cards/${bug.id}`)).status).toBe("doing");
    expect(await doing.getByText("No cards").isVisible()).toBe(false);
    expect(await description(page, '.lane[data-lane="doing"] .lane-cards')).toBe("");
    expect(await strayListChildren(page)).toEqual([]);
    // emptied by an agent: empty again
    await call(ui.srv.url, "DELETE", `/cards/${bug.id}`, undefined, "agent-1");
    await doing.getByText("No cards").waitFor();
    expect(await strayListChildren(page)).toEqual([]);
    await page.close();
  }, T);
});

/** Waits until the seeded done cards have been there past their 1 s limit. */
const doneIsStuck = () => Bun.sleep(Math.max(0, Date.parse(s.ci.status_since) + 1500 - Date.now()));

describe.serial("conditions without hover", () => {
  test("the breach count is a button that lists the board's conditions in words; a card's opens the card; Esc or a second press closes it", async () => {
    await doneIsStuck();
    const page = await ui.browser.page();
    await openBoard(page);
    const count = page.locator("#breach-count");
    await page.locator("#breach-count:not([hidden])").waitFor();
    expect(await count.evaluate((el) => el.tagName)).toBe("BUTTON");
    expect(await count.getAttribute("aria-expanded")).toBe("false");
    const list = page.locator(`#${await count.getAttribute("aria-controls")}`);
    expect(await list.isVisible()).toBe(false);
    // opens with the keyboard; the focus stays on the button (not a dialog)
    await count.focus();
    await page.keyboard.press("Enter");
    await list.waitFor();
    expect(await count.getAttribute("aria-expanded")).toBe("true");
    expect(await focused(page)).toBe("button#breach-count");
    const words = await list.innerText();
    expect(words).toContain("In review holds 3 cards, over its limit of 2");
    expect(words).toMatch(/“Set up the CI pipeline” — Done: \d+s in this status \(limit 1s\)/);
    expect(words).toContain("Blocked: “Add rate limiting to the public API”");
    // Tab goes on into the list; a card's condition is a button that opens the card
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.querySelector("#breach-list")!.contains(document.activeElement))).toBe(true);
    await list.getByRole("button", { name: /Add rate limiting/ }).focus();
    await page.keyboard.press("Enter");
    await page.locator("#detail-title", { hasText: s.rate.title }).waitFor();
    expect(new URL(page.url()).searchParams.get("card")).toBe(s.rate.id);
    expect(await list.isVisible()).toBe(false);
    expect(await count.getAttribute("aria-expanded")).toBe("false");
    await page.keyboard.press("Escape");
    await page.locator("#detail").waitFor({ state: "hidden" });
    // Esc in the list closes it and gives the focus back to the button
    await count.click();
    await list.getByRole("button").first().focus();
    await page.keyboard.press("Escape");
    expect(await list.isVisible()).toBe(false);
    expect(await focused(page)).toBe("button#breach-count");
    // a second press closes it too
    await page.keyboard.press("Enter");
    await list.waitFor();
    await page.keyboard.press("Enter");
    expect(await list.isVisible()).toBe(false);
    expect(await count.getAttribute("aria-expanded")).toBe("false");
    await page.close();
  }, T);

  test("an open list of conditions follows the board's breaches and leaves the focus where it is", async () => {
    await doneIsStuck();
    const page = await ui.browser.page();
    await openBoard(page);
    await page.locator('#live-status[data-state="live"]').waitFor();
    await page.locator("#breach-count:not([hidden])").click();
    const list = page.locator("#breach-list");
    const ci = list.getByRole("button", { name: /Set up the CI pipeline/ });
    await ci.focus();
    await page.evaluate(() => { (window as unknown as { kept: Element | null }).kept = document.activeElement; });
    const c = await call(ui.srv.url, "POST", "/cards", { type_id: "task", title: "A fourth card in review", status: "review", fields: { priority: "low" } }, "agent-1");
    await list.getByText("In review holds 4 cards, over its limit of 2").waitFor();
    expect(await page.evaluate(() => document.activeElement === (window as unknown as { kept: Element | null }).kept)).toBe(true);
    expect(await list.isVisible()).toBe(true);
    await call(ui.srv.url, "DELETE", `/cards/${c.id}`, undefined, "agent-1");
    await list.getByText("In review holds 3 cards, over its limit of 2").waitFor();
    expect(await focused(page)).toBe(`button`);
    expect(await page.evaluate(() => document.activeElement === (window as unknown as { kept: Element | null }).kept)).toBe(true);
    await page.close();
  }, T);

  test("the hidden-card note is a button that shows the board's default filter in words", async () => {
    const bug = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "Closed as won't fix", status: "todo", fields: { severity: "minor", steps: "s", resolution: "wontfix" } });
    const page = await ui.browser.page();
    await openBoard(page, "?board=bugs");
    const note = page.locator("#hidden-note");
    await page.locator("#hidden-note:not([hidden])").waitFor();
    expect(await note.evaluate((el) => el.tagName)).toBe("BUTTON");
    expect(await note.getAttribute("aria-expanded")).toBe("false");
    const panel = page.locator(`#${await note.getAttribute("aria-controls")}`);
    await note.focus();
    await page.keyboard.press("Enter");
    await panel.waitFor();
    expect(await note.getAttribute("aria-expanded")).toBe("true");
    expect(await panel.innerText()).toContain("Resolution is not “wontfix”");
    await page.keyboard.press("Escape");
    expect(await panel.isVisible()).toBe(false);
    expect(await focused(page)).toBe("button#hidden-note");
    await call(ui.srv.url, "DELETE", `/cards/${bug.id}`);
    await page.close();
  }, T);

  test("the card panel says the card's conditions in words: how long, and the limit; the card's name says them too", async () => {
    await doneIsStuck();
    const page = await ui.browser.page();
    await openBoard(page, `?card=${s.ci.id}`);
    const said = /Done: \d+s in this status \(limit 1s\)/;
    await page.locator("#detail-title").waitFor();
    expect(await page.locator("#detail").innerText()).toMatch(said);
    expect(await page.locator(`.card[data-id="${s.ci.id}"]`).getAttribute("aria-label")).toMatch(said);
    await page.close();
  }, T);
});

interface Control { i: number; what: string; x: number; y: number; w: number; h: number; fits: boolean }

/**
 * The top bar's shown controls (buttons, pickers, fields; the panels of its signals left
 * out), each tagged `data-probe` for a locator, with its box and whether a picker is wide
 * enough for its chosen option (text, padding and the arrow).
 */
const barControls = (page: Page): Promise<Control[]> => page.evaluate(() => {
  const ctx = document.createElement("canvas").getContext("2d")!;
  return [...document.querySelectorAll<HTMLElement>("#topbar button, #topbar select, #topbar input, #topbar a[href]")]
    .filter((el) => el.getClientRects().length > 0 && !el.closest(".popover"))
    .map((el, i) => {
      el.dataset.probe = String(i);
      const r = el.getBoundingClientRect();
      let fits = true;
      if (el instanceof HTMLSelectElement) {
        const cs = getComputedStyle(el);
        ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        const text = ctx.measureText(el.selectedOptions[0]?.text ?? "").width;
        fits = text + parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) + 16 <= el.clientWidth;
      }
      const what = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} "${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 24)}"`;
      return { i, what, x: r.x, y: r.y, w: r.width, h: r.height, fits };
    });
});

/** What is wrong with the bar's controls at this size: overlaps, parts outside the window, pickers too narrow for their value. */
async function barProblems(page: Page): Promise<string[]> {
  const { width, height } = page.viewportSize()!;
  const cs = await barControls(page);
  const out: string[] = [];
  for (const c of cs) {
    if (c.x < -0.5 || c.x + c.w > width + 0.5 || c.y < -0.5 || c.y + c.h > height + 0.5) out.push(`${c.what} is outside the window`);
    if (!c.fits) out.push(`${c.what} cuts off its value`);
  }
  for (const [n, a] of cs.entries()) for (const b of cs.slice(n + 1)) {
    const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
    const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
    if (dx > 1 && dy > 1) out.push(`${a.what} overlaps ${b.what}`);
  }
  if (await page.evaluate(() => document.documentElement.scrollWidth > innerWidth)) out.push("the page scrolls sideways");
  return out;
}

/** Focuses a bar control with the keyboard's means and acts on it; says what did not work. */
async function useControl(page: Page, c: Control): Promise<string> {
  const el = page.locator(`[data-probe="${c.i}"]`);
  await el.focus();
  const state = () => el.evaluate((e) => {
    const hit = (() => { const r = e.getBoundingClientRect(); return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); })();
    return {
      focused: document.activeElement === e, seen: Boolean(hit && (e === hit || e.contains(hit))),
      expanded: e.getAttribute("aria-expanded"), pressed: e.getAttribute("aria-pressed"),
      value: (e as HTMLInputElement).value, dialog: document.querySelectorAll("dialog[open]").length,
    };
  });
  const before = await state();
  if (!before.focused) return `${c.what} does not take the focus`;
  if (!before.seen) return `${c.what} is covered where it has the focus`;
  const tag = await el.evaluate((e) => e.tagName);
  if (tag === "SELECT") {
    const last = await el.evaluate((e) => (e as HTMLSelectElement).selectedIndex === (e as HTMLSelectElement).length - 1);
    await page.keyboard.press(last ? "ArrowUp" : "ArrowDown");
    const stepped = (await state()).value !== before.value;
    await page.keyboard.press("Escape"); // the pickers put the value back
    return stepped ? "" : `${c.what} does not step to another value`;
  }
  if (tag === "INPUT") {
    await page.keyboard.type("x");
    const typed = (await state()).value === `${before.value}x`;
    await page.keyboard.press("Escape");
    return typed ? "" : `${c.what} takes no typing`;
  }
  await page.keyboard.press("Enter");
  const after = await state();
  let acted = false;
  if (before.expanded !== null) acted = after.expanded !== before.expanded;
  // a chip shows its view: pressed then (All, pressed already, stays so)
  else if (before.pressed !== null) acted = after.pressed === "true" || after.pressed !== before.pressed;
  else acted = after.dialog > before.dialog;
  // put it back: a second press, or Esc for a dialog
  if (before.expanded !== null || (before.pressed !== null && after.pressed !== before.pressed)) { await el.focus(); await page.keyboard.press("Enter"); }
  else if (after.dialog > before.dialog) await page.keyboard.press("Escape");
  await page.waitForTimeout(100);
  return acted ? "" : `${c.what} does nothing on Enter`;
}

describe.serial("reflow", () => {
  test("at 320×256 the top bar's controls neither overlap nor leave the window, each can be focused and used, and the board keeps most of the height", async () => {
    await doneIsStuck();
    const bug = await call(ui.srv.url, "POST", "/cards", { type_id: "bug", title: "Hidden by the filter", status: "todo", fields: { severity: "minor", steps: "s", resolution: "wontfix" } });
    const page = await ui.browser.page(320, 256);
    // main shows the breach count, bugs the hidden-card note
    for (const [board, signal] of [["main", "#breach-count"], ["bugs", "#hidden-note"]] as const) {
      await openBoard(page, `?board=${board}`);
      await page.locator(`${signal}:not([hidden])`).waitFor();
      // the board keeps 60 % of the height (the bar took half of it)
      const high = Math.round((await page.locator("#board").boundingBox())!.height);
      expect([...(high < 256 * 0.6 ? [`${board}: the board is ${high} px high`] : []), ...await barProblems(page)]).toEqual([]);
      // controls behind a menu button (aria-expanded, controlling part of the bar): shown, then checked too
      for (const m of await page.locator("#topbar button[aria-expanded=false][aria-controls]").all()) {
        const holds = await m.evaluate((b) => Boolean(document.getElementById(b.getAttribute("aria-controls")!)?.querySelector("button, select, input")));
        if (!holds || !(await m.isVisible())) continue;
        await m.click();
        expect(await barProblems(page)).toEqual([]);
      }
      const problems: string[] = [];
      for (const c of await barControls(page)) { const p = await useControl(page, c); if (p) problems.push(p); }
      expect(problems).toEqual([]);
      expect(new URL(page.url()).searchParams.get("board")).toBe(board);
      // the signal's panel fits the window too
      await page.locator(signal).click();
      const panel = (await page.locator(`#${await page.locator(signal).getAttribute("aria-controls")}`).boundingBox())!;
      expect([panel.x >= 0, panel.x + panel.width <= 320, panel.y + panel.height <= 256]).toEqual([true, true, true]);
    }
    // `/` from the board reaches the search box, shown first when it is folded away; Esc folds it again
    await openBoard(page);
    await page.locator(`.card[data-id="${s.guide.id}"]`).focus();
    await page.keyboard.press("/");
    expect(await focused(page)).toBe("input#search");
    expect(await page.locator("#search").isVisible()).toBe(true);
    const menu = page.locator("#topbar button[aria-expanded=true][aria-controls]");
    const folds = await menu.count() > 0;
    await page.keyboard.press("Escape");
    if (folds) {
      expect(await page.locator("#search").isVisible()).toBe(false);
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-expanded"))).toBe("false");
    }
    await call(ui.srv.url, "DELETE", `/cards/${bug.id}`);
    await page.close();
  }, 60_000);
});
