/**
 * Builds dist/cards: one self-contained executable (bun build --compile, minified,
 * bytecode, ESM; perf-baselines.md §1). Prints the build logs and exits 1 on failure.
 */
import { mkdirSync } from "node:fs";
import pkg from "./package.json" with { type: "json" };

const outfile = process.env.CARDS_OUTFILE ?? "dist/cards";
mkdirSync("dist", { recursive: true });

const result = await Bun.build({
  entrypoints: ["src/main.ts"],
  compile: { outfile, ...(process.env.CARDS_TARGET ? { target: process.env.CARDS_TARGET as never } : {}) },
  minify: true,
  bytecode: true,
  format: "esm",
  splitting: true,
  sourcemap: "none",
  define: { CARDS_VERSION: JSON.stringify(pkg.version) },
});

if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.error(`built ${outfile} (cards ${pkg.version})`);
