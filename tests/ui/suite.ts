/** The setup every UI test file shares: one `cards serve` and one headless browser. */
import { afterAll, beforeAll } from "bun:test";
import { assertBinary, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { launch, type Browser } from "./browser.ts";

/**
 * Serves a sample workspace (changed by `edit` first) and launches a browser before the
 * file's tests, and stops both after them. The fields are set once beforeAll has run.
 */
export function servedBoard(edit?: (files: any) => void): { srv: Server; browser: Browser } {
  const ui = {} as { srv: Server; browser: Browser };
  beforeAll(async () => {
    assertBinary();
    ui.srv = await serve(makeWorkspace(edit));
    ui.browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await ui.browser?.close();
    await ui.srv?.stop();
  });
  return ui;
}
