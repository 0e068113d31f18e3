/** `cards init [dir]`: writes the sample workspace, never over a file that exists. */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from "node:fs";
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
    // a definitions folder of another origin keeps every file it has
    const taken = Object.keys(files).filter((rel) => existsSync(join(root, rel))).sort();
    if (taken.length > 0) {
      throw new CardsError("usage", `${root} already has ${taken.join(", ")}; init writes no file over another`, {
        value: taken, hint: "pick an empty directory, or move those files away first",
      });
    }
    const written: string[] = [];
    /** the outermost folders this init made (removed with the files on a failure) */
    const made: string[] = [];
    for (const [rel, text] of Object.entries(files)) {
      const path = join(root, rel);
      try {
        const top = mkdirSync(dirname(path), { recursive: true });
        if (top) made.push(top);
        // created (never over another file), then filled: one that fills part way (a full
        // disk) is removed with the rest
        const fd = openSync(path, "wx");
        written.push(path);
        try { writeFileSync(fd, text); } finally { closeSync(fd); }
      } catch (e) {
        // no half-written workspace: a second init would refuse it
        for (const w of written) rmSync(w, { force: true });
        for (const d of made.reverse()) rmSync(d, { recursive: true, force: true }); // made by this init: nothing of anyone else's is in them
        throw cannotWrite(root, path, e as NodeJS.ErrnoException);
      }
    }
    return { root, files: Object.keys(files).sort() };
  },
});

function cannotWrite(root: string, path: string, e: NodeJS.ErrnoException): CardsError {
  const why: Record<string, string> = {
    ENOTDIR: "a part of the path is a file, not a directory",
    EEXIST: "a file is in the way",
    EACCES: "permission denied",
    EPERM: "permission denied",
    EROFS: "the file system is read-only",
    ENOSPC: "the disk is full",
    ENOENT: "the path cannot be created",
  };
  const reason = why[e.code ?? ""] ?? e.message;
  return new CardsError(e.code === "ENOSPC" ? "unavailable" : "usage", `cannot write the workspace into ${root}: ${reason} (${path}); nothing was left behind`, {
    hint: e.code === "ENOSPC" ? "free disk space and run `cards init` again" : "pick a directory you can write to",
  });
}
