/**
 * Headless Chromium for the UI tests: Debian's /usr/bin/chromium driven by playwright-core
 * (no browser download). When the binary is missing and we are root on Debian, the setup
 * installs it with apt-get; otherwise it fails with the command to run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    const r = spawnSync("sh", ["-c", "apt-get update && apt-get install -y chromium"], { stdio: ["ignore", "ignore", "inherit"], timeout: 600_000 });
    if (r.status === 0 && existsSync(CHROMIUM)) return;
  }
  throw new Error(`${CHROMIUM} is missing: install it with \`apt-get update && apt-get install -y chromium\``);
}

export interface Browser { context: BrowserContext; page(width?: number, height?: number): Promise<Page>; close(): Promise<void> }

/** A browser with a fresh profile directory, removed on close. */
export async function launch(): Promise<Browser> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), "cards-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1440, height: 900 },
    timeout: 30_000,
  });
  return {
    context,
    async page(width = 1440, height = 900) {
      const p = await context.newPage();
      await p.setViewportSize({ width, height });
      p.setDefaultTimeout(5_000);
      return p;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Collects uncaught page errors so a test can assert the page ran cleanly. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  return errors;
}
