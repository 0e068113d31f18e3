/** `cards init [dir]`: writes the sample workspace. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defineCommand } from "../define.ts";
import { CardsError } from "../../domain/errors.ts";
import { sampleFiles } from "../../definitions/sample.ts";
import type { CliGlobals } from "../client.ts";

export default defineCommand({
  meta: { name: "init", description: "Write a starter workspace (an agent work queue) into DIR (default: here)" },
  args: { dir: { type: "positional", description: "directory to create the workspace in", required: false } },
  run: ({ args, data }) => {
    const g = data as CliGlobals;
    const root = resolve(g.cwd, args.dir ?? g.dir ?? ".");
    if (existsSync(join(root, "definitions", "workspace.json"))) {
      throw new CardsError("usage", `${root} already holds a workspace (definitions/workspace.json)`, {
        hint: "pick an empty directory, or edit the existing definitions",
      });
    }
    const files = sampleFiles();
    for (const [rel, text] of Object.entries(files)) {
      const path = join(root, rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
    return { root, files: Object.keys(files).sort() };
  },
});
