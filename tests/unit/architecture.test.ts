/**
 * The dependency direction of DEVELOPERS.md: main -> cli | http | mcp -> (api) -> service
 * -> events, definitions, domain, store and blob ports. Drivers are wired only by
 * platform/; nothing outside src/platform/ names a Bun API.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, dirname, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** project-relative targets of every relative import in a file */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
    const spec = m[1] ?? m[2]!;
    if (spec.startsWith(".")) out.push(relative(SRC, resolve(dirname(file), spec)));
    else out.push(`pkg:${spec}`);
  }
  return out;
}

const layer = (rel: string): string => (rel.includes("/") ? rel.split("/")[0]! : rel.replace(/\.ts$/, ""));

/** For each layer: the layers (and exact files) it may import. */
const ALLOWED: Record<string, (target: string) => boolean> = {
  domain: (t) => layer(t) === "domain",
  definitions: (t) => ["domain", "definitions"].includes(layer(t)) || t.startsWith("../definitions/"), // the sample workspace files
  events: (t) => ["domain", "events"].includes(layer(t)) || t === "store/port.ts",
  store: (t) => ["domain", "store"].includes(layer(t)) || t === "platform/sqlite.ts" || t === "platform/sqlite-backlog.ts" || t === "platform/worker.ts",
  blobs: (t) => ["domain", "blobs"].includes(layer(t)) || t.startsWith("platform/"),
  service: (t) => ["domain", "definitions", "events", "service", "extensions"].includes(layer(t)) || t === "store/port.ts" || t === "blobs/port.ts",
  extensions: (t) => ["domain", "events", "extensions"].includes(layer(t)) || t.startsWith("platform/"),
  // api sits right above the service and loads its modules lazily (cold-path cost)
  api: (t) => ["domain", "api", "service"].includes(layer(t)),
  http: (t) => ["domain", "api", "http", "generated", "extensions"].includes(layer(t)) || t.startsWith("service/index") || t.startsWith("platform/"),
  cli: (t) => ["domain", "cli", "extensions"].includes(layer(t)) || t.startsWith("api/") || t.startsWith("service/index") || t.startsWith("platform/open") || t === "platform/stdout.ts" || t === "definitions/load.ts" || t === "definitions/sample.ts",
  mcp: (t) => ["domain", "mcp"].includes(layer(t)) || t.startsWith("service/index") || t.startsWith("platform/"),
  platform: (t) => ["domain", "platform"].includes(layer(t)) || t === "generated/worker-sources.gen.ts" || ["service/index.ts", "service/workspace.ts", "service/service.ts"].includes(t) || t.startsWith("store/sqlite/") || t === "blobs/fs.ts",
  main: (t) => ["cli", "http", "mcp"].includes(layer(t)),
  generated: () => true,
  // the board's drag targets are the server's own transition rule, and text is cut as the
  // server cuts it (pure, import-free modules)
  ui: (t) => layer(t) === "ui" || t === "domain/moves.ts" || t === "domain/codepoints.ts",
};

describe("architecture", () => {
  const all = files(SRC);

  test("every source file belongs to a known layer", () => {
    const unknown = all.map((f) => relative(SRC, f)).filter((r) => !(layer(r) in ALLOWED));
    expect(unknown).toEqual([]);
  });

  test("imports only point the allowed way", () => {
    const bad: string[] = [];
    for (const f of all) {
      const rel = relative(SRC, f);
      const rule = ALLOWED[layer(rel)];
      if (!rule) continue;
      for (const t of imports(f)) {
        if (t.startsWith("pkg:")) continue;
        if (!rule(t)) bad.push(`${rel} -> ${t}`);
      }
    }
    expect(bad).toEqual([]);
  });

  test("domain/ imports no package at all", () => {
    const bad = all
      .filter((f) => relative(SRC, f).startsWith("domain/"))
      .flatMap((f) => imports(f).filter((t) => t.startsWith("pkg:")).map((t) => `${relative(SRC, f)} -> ${t}`));
    expect(bad).toEqual([]);
  });

  test("only src/platform/ names Bun APIs", () => {
    const bad: string[] = [];
    for (const f of all) {
      const rel = relative(SRC, f);
      if (rel.startsWith("platform/")) continue;
      const text = readFileSync(f, "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "");
      if (/\bBun\.|["']bun:|from\s+["']bun["']/.test(text)) bad.push(rel);
    }
    expect(bad).toEqual([]);
  });

  test("the checker itself catches a violation", () => {
    expect(ALLOWED.service!("store/sqlite/index.ts")).toBe(false);
    expect(ALLOWED.cli!("http/app.ts")).toBe(false);
    expect(ALLOWED.domain!("service/index.ts")).toBe(false);
    expect(ALLOWED.http!("store/sqlite/queries.ts")).toBe(false);
  });
});
